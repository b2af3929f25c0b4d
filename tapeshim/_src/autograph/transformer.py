"""AutoGraph's source rewrite: Python control flow becomes calls to `operators`.

The rewrite works on the function's `ast` in three passes, as TF's AutoGraph does
(its design, not its code):

1. `return`, `break` and `continue` inside compound statements become flag
   variables (`do_return__`, `break__N`, `continue__N`) and guards: the statements
   after a jump run under `if not flag:`, and a loop also stops when its flag is set.
2. Every `if`, `while` and `for` becomes local functions over the variables the
   statement assigns (its *state*) and one call to `ag__.if_stmt`, `ag__.while_stmt`
   or `ag__.for_stmt`, which decides at run time whether the condition is a tensor
   (then `tf.cond` / `tf.while_loop`) or a Python value (then plain Python).
3. `and`, `or`, `not` and `a if c else b` become `ag__.and_`, `ag__.or_`, `ag__.not_`, `ag__.if_exp` (lazy operands),
   and calls become `ag__.converted_call` so that called user functions are
   converted too.

Every generated node carries the line of the statement it replaces, so errors and
tracebacks name the user's file and line.
"""

from __future__ import annotations

import ast
import itertools
from typing import Iterable, Sequence, TypeVar, Union

_RETURN_FLAG = "do_return__"
_RETURN_VALUE = "retval__"
_GENERATED_FUNCTIONS = ("if_body__", "else_body__", "loop_test__", "loop_body__", "extra_test__", "loop_target__")
# A statement's getter and setter of the items and attributes it carries: generated, but neither state nor walked
# by the analyses (their loads and stores are the operator's, not the user's).
_ACCESSORS = ("get_composites__", "set_composites__")
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_POSITIONED = (ast.expr, ast.stmt, ast.arg, ast.keyword, ast.excepthandler, ast.alias, ast.pattern)
_Located = TypeVar(  # a node with a source position (one of _POSITIONED)
    "_Located", bound=Union[ast.expr, ast.stmt, ast.arg, ast.keyword, ast.excepthandler, ast.alias, ast.pattern]
)


def _walk_scope(node: ast.AST) -> Iterable[ast.AST]:
    """`ast.walk` that does not enter nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, _NESTED_SCOPES):
            stack.extend(ast.iter_child_nodes(child))


def _walk_loop_level(node: ast.AST) -> Iterable[ast.AST]:
    """Like `_walk_scope`, also not entering nested loops (for `break`/`continue`)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, _NESTED_SCOPES + (ast.While, ast.For)):
            stack.extend(ast.iter_child_nodes(child))


def _contains(stmts: list[ast.stmt], kind: type, loop_level: bool) -> bool:
    walk = _walk_loop_level if loop_level else _walk_scope
    return any(isinstance(s, kind) or any(isinstance(n, kind) for n in walk(s)) for s in stmts)


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names bound by `stmts` in this scope (assignments, loop targets, defs, imports), in order.

    A name that the block deletes after binding it (`del tape`) is left out: it does not
    outlive the block, so it is no loop or branch state.
    """
    names: list[str] = []

    def add(name: str) -> None:
        if name not in names and not name.startswith(_GENERATED_FUNCTIONS + _ACCESSORS):
            names.append(name)

    deleted: set[str] = set()  # names a later statement deletes (`del tape`): not live after the block
    for stmt in stmts:
        for node in itertools.chain([stmt], _walk_scope(stmt)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
                deleted.add(node.id)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                deleted.discard(node.id)
                add(node.id)
            elif (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node is not stmt
                or (node is stmt and isinstance(node, (ast.FunctionDef, ast.ClassDef)))
            ):
                add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    add((alias.asname or alias.name).split(".")[0])
    return [name for name in names if name not in deleted]


def _walk_converted(node: ast.AST) -> Iterable[ast.AST]:
    """Like `_walk_scope`, also entering the functions the conversion made (a branch's, an inner loop's body)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        generated = isinstance(child, ast.FunctionDef) and child.name.startswith(_GENERATED_FUNCTIONS)
        if generated or not isinstance(child, _NESTED_SCOPES):
            stack.extend(ast.iter_child_nodes(child))


def _walk_user_code(node: ast.AST) -> Iterable[ast.AST]:
    """`ast.walk` that does not enter the composites' accessors (`_ACCESSORS`)."""
    stack = [node]
    while stack:
        child = stack.pop()
        yield child
        if not (isinstance(child, ast.FunctionDef) and child.name.startswith(_ACCESSORS)):
            stack.extend(ast.iter_child_nodes(child))


def _invariant(node: ast.expr, state: Sequence[str]) -> bool:
    """Whether `node` (an item or attribute target's base or subscript) is the same in every iteration: a
    constant, or names and attributes of names the loop does not assign."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id not in state
    if isinstance(node, ast.Attribute):
        return _invariant(node.value, state)
    if isinstance(node, ast.Subscript):
        return _invariant(node.value, state) and _invariant(node.slice, state)
    return False


def composite_targets(stmts: list[ast.stmt], state: Sequence[str]) -> list[str]:
    """The items and attributes (`acc[0]`, `stats["n"]`, `self.total`) that `stmts` assign and that are the same
    in every iteration of a loop whose body they are: TF's AutoGraph makes them loop variables too."""
    found: list[str] = []
    for stmt in stmts:
        for node in itertools.chain([stmt], _walk_converted(stmt)):
            if (
                isinstance(node, (ast.Subscript, ast.Attribute))
                and isinstance(node.ctx, ast.Store)
                and _invariant(node, state)
                and ast.unparse(node) not in found
            ):
                found.append(ast.unparse(node))
    return found


def _composite_uses(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """The items and attributes (as source text) that `stmt` reads and assigns (an augmented one does both)."""
    loads: set[str] = set()
    stores: set[str] = set()
    for node in itertools.chain([stmt], _walk_converted(stmt)):
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            (stores if isinstance(node.ctx, ast.Store) else loads).add(ast.unparse(node))
        if isinstance(node, ast.AugAssign) and isinstance(node.target, (ast.Subscript, ast.Attribute)):
            loads.add(ast.unparse(node.target))
    return loads, stores


def carried_composites(stmts: list[ast.stmt], state: Sequence[str]) -> list[str]:
    """The `composite_targets` of a loop body that an iteration reads before it assigns them (`acc[0] += x`):
    each iteration needs the previous one's value, as for a loop variable. (A statement that reads and
    assigns one counts as reading first.)"""
    targets = composite_targets(stmts, state)
    written: set[str] = set()
    carried: list[str] = []
    for stmt in stmts:
        loads, stores = _composite_uses(stmt)
        carried += [t for t in targets if t in loads and t not in written and t not in carried]
        written |= stores
    return carried


def reads_before_writes(stmts: list[ast.stmt], written: frozenset[str] = frozenset()) -> tuple[set[str], set[str]]:
    """Names `stmts` may read before writing them, and the names they surely write (beyond `written`).

    A loop's body run again reads those names as the previous iteration left them,
    so they are live at the end of every statement of the body (`_ControlFlow`).
    A write inside a branch counts only when both branches make it; reads in
    nested functions and lambdas count where they are defined.
    """
    read: set[str] = set()
    done = set(written)
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            read |= _loads([stmt.test]) - done
            body_reads, body_done = reads_before_writes(stmt.body, frozenset(done))
            else_reads, else_done = reads_before_writes(stmt.orelse, frozenset(done))
            read |= body_reads | else_reads
            done |= body_done & else_done
        elif isinstance(stmt, (ast.For, ast.While)):
            header = [stmt.iter] if isinstance(stmt, ast.For) else [stmt.test]
            read |= _loads(header) - done
            target = (
                set(assigned_names([ast.Assign(targets=[stmt.target], value=ast.Constant(0))]))
                if isinstance(stmt, ast.For)
                else set()
            )
            read |= reads_before_writes(stmt.body, frozenset(done | target))[0]
            read |= reads_before_writes(stmt.orelse, frozenset(done))[0]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):  # (its body runs, in order)
            read |= _loads([item.context_expr for item in stmt.items]) - done
            done |= set(assigned_names([ast.Assign(targets=[v], value=ast.Constant(0)) for v in _with_targets(stmt)]))
            body_reads, body_done = reads_before_writes(stmt.body, frozenset(done))
            read |= body_reads
            done |= body_done
        elif _is_compound(stmt):  # `try`, `match`: each block's own reads; its writes may not happen
            for block in _blocks(stmt):
                read |= reads_before_writes(block, frozenset(done))[0]
            read |= _loads(_headers(stmt)) - done
        else:
            read |= _loads([stmt]) - done
            done |= set(assigned_names([stmt]))
    return read, done - written


def _with_targets(stmt: ast.With | ast.AsyncWith) -> list[ast.expr]:
    return [item.optional_vars for item in stmt.items if item.optional_vars is not None]


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists inside a compound statement (an `except` clause's and a `case`'s bodies too)."""
    blocks: list[list[ast.stmt]] = []
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list):
            blocks.append(block)
    for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", []):
        blocks.append(part.body)
    return blocks


def _headers(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of a compound statement outside its blocks (an `except` clause's type, a match subject)."""
    headers: list[ast.AST] = [part.type for part in getattr(stmt, "handlers", []) if part.type is not None]
    subject = getattr(stmt, "subject", None)
    return headers + ([subject] if subject is not None else [])


def _is_compound(stmt: ast.stmt) -> bool:
    """A statement holding blocks of statements (a definition is not: it binds its name)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(isinstance(getattr(stmt, field, None), list) for field in ("body", "orelse", "handlers", "cases"))


def _loads(nodes: Sequence[ast.AST]) -> set[str]:
    """Names `nodes` read, an augmented assignment's target included."""
    names: set[str] = set()
    for node in nodes:
        for child in itertools.chain([node], ast.walk(node)):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                names.add(child.id)
            elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
                names.add(child.target.id)
    return names


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Store() if store else ast.Load())


def _ag(attr: str) -> ast.Attribute:
    return ast.Attribute(value=_name("ag__"), attr=attr, ctx=ast.Load())


def _call(func: ast.expr, *args: ast.expr) -> ast.Call:
    return ast.Call(func=func, args=list(args), keywords=[])


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(name, True)], value=value)


def _tuple(names: list[str], store: bool = False) -> ast.Tuple:
    return ast.Tuple(elts=[_name(n, store) for n in names], ctx=ast.Store() if store else ast.Load())


def _strings(names: Iterable[str]) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _at(node: _Located, where: ast.expr | ast.stmt) -> _Located:
    """Gives a generated node the line of `where` (start and end: Python reports a call's line from
    its callee's end, which must not run on to the end of a compound statement)."""
    node.lineno = node.end_lineno = where.lineno
    node.col_offset = node.end_col_offset = where.col_offset
    return node


def _located(nodes: list[ast.stmt], where: ast.expr | ast.stmt) -> list[ast.stmt]:
    for node in nodes:
        for child in ast.walk(node):
            if isinstance(child, _POSITIONED) and getattr(child, "lineno", None) is None:
                _at(child, where)
    return nodes


def _always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether a block ends in `return` on every path (a last `return`, or an `if` whose branches both do)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


class _Jumps:
    """Pass 1: `return`/`break`/`continue` inside compound statements become flags and guards."""

    def __init__(self) -> None:
        self.counter = itertools.count()
        self.stops: dict[ast.stmt, list[str]] = {}  # per loop: the flags that end it early (its extra test)
        self.breaks: dict[ast.stmt, str] = {}  # per loop with a `break`: its flag

    def function(self, fn: ast.FunctionDef) -> None:
        nested_return = any(
            isinstance(n, ast.Return) for s in fn.body if not isinstance(s, ast.Return) for n in _walk_scope(s)
        )
        self.returns = nested_return
        body = self.block(fn.body, None, None)
        if nested_return:
            start = [
                _assign(_RETURN_FLAG, ast.Constant(False)),
                _assign(_RETURN_VALUE, _call(_ag("UndefinedReturnValue"))),
            ]
            body = start + body
            body.append(ast.Return(value=_call(_ag("retval"), _name(_RETURN_VALUE))))
            _located(body, fn)
        fn.body = body

    def _flags(self, stmt: ast.stmt, brk: str | None, cont: str | None) -> list[str]:
        flags = []
        if self.returns and _contains([stmt], ast.Return, False):
            flags.append(_RETURN_FLAG)
        if brk and _contains([stmt], ast.Break, True):
            flags.append(brk)
        if cont and _contains([stmt], ast.Continue, True):
            flags.append(cont)
        return flags

    def block(self, stmts: list[ast.stmt], brk: str | None, cont: str | None) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return) and self.returns:
                value = stmt.value if stmt.value is not None else ast.Constant(None)
                out += _located([_assign(_RETURN_FLAG, ast.Constant(True)), _assign(_RETURN_VALUE, value)], stmt)
                return out
            if isinstance(stmt, ast.Break) and brk:
                out += _located([_assign(brk, ast.Constant(True))], stmt)
                return out
            if isinstance(stmt, ast.Continue) and cont:
                out += _located([_assign(cont, ast.Constant(True))], stmt)
                return out
            rest = stmts[i + 1 :]
            if (
                self.returns
                and rest
                and isinstance(stmt, ast.If)
                and _always_returns(stmt.body) != _always_returns(stmt.orelse)
            ):
                # As TF: the statements after an `if` with one branch that always returns belong to the other.
                if _always_returns(stmt.body):
                    stmt.orelse = stmt.orelse + rest
                else:
                    stmt.body = stmt.body + rest
                out.append(self.compound(stmt, brk, cont))
                return out
            flags = self._flags(stmt, brk, cont)
            out.append(self.compound(stmt, brk, cont))
            brk_flag = self.breaks.get(stmt)
            if brk_flag:
                out.insert(len(out) - 1, _located([_assign(brk_flag, ast.Constant(False))], stmt)[0])
            rest = stmts[i + 1 :]
            if flags and rest:
                guard = ast.If(test=self._none_set(flags), body=self.block(rest, brk, cont), orelse=[])
                out += _located([guard], rest[0])
                return out
        return out

    @staticmethod
    def _none_set(flags: list[str]) -> ast.expr:
        test: ast.expr = ast.UnaryOp(op=ast.Not(), operand=_name(flags[0]))
        for flag in flags[1:]:
            test = ast.BoolOp(op=ast.And(), values=[test, ast.UnaryOp(op=ast.Not(), operand=_name(flag))])
        return test

    def compound(self, stmt: ast.stmt, brk: str | None, cont: str | None) -> ast.stmt:
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, brk, cont) or [ast.Pass()]
            stmt.orelse = self.block(stmt.orelse, brk, cont)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            stmt.body = self.block(stmt.body, brk, cont) or [ast.Pass()]
        elif isinstance(stmt, ast.Try):
            stmt.body = self.block(stmt.body, brk, cont) or [ast.Pass()]
            for handler in stmt.handlers:
                handler.body = self.block(handler.body, brk, cont) or [ast.Pass()]
            stmt.orelse = self.block(stmt.orelse, brk, cont)
            stmt.finalbody = self.block(stmt.finalbody, brk, cont)
        elif isinstance(stmt, (ast.While, ast.For)) and not stmt.orelse:
            self.loop(stmt)
        return stmt

    def loop(self, loop: ast.While | ast.For) -> None:
        n = next(self.counter)
        brk = f"break__{n}" if _contains(loop.body, ast.Break, True) else None
        cont = f"continue__{n}" if _contains(loop.body, ast.Continue, True) else None
        body = self.block(loop.body, brk, cont)
        if cont:
            body = _located([_assign(cont, ast.Constant(False))], loop) + body
        loop.body = body or [ast.Pass()]
        stops = ([_RETURN_FLAG] if self.returns and _contains(loop.body, ast.Return, False) else []) + (
            [brk] if brk else []
        )
        self.stops[loop] = stops
        if brk:
            self.breaks[loop] = brk
        if stops and isinstance(loop, ast.While):
            loop.test = ast.BoolOp(op=ast.And(), values=[self._none_set(stops), loop.test])
            _at(loop.test, loop)


class _ControlFlow(ast.NodeTransformer):
    """Pass 2: `if`/`while`/`for` become local functions and one `ag__` operator call."""

    def __init__(self, function: ast.FunctionDef, stops: dict[ast.stmt, list[str]]) -> None:
        self.counter = itertools.count()
        self.function = function
        self.stops = stops  # pass 1's early-exit flags of each loop
        # Per enclosing loop being converted: the names its body (and test) may read before writing them.
        self.loop_reads: list[set[str]] = []

    def _live_outside(self, node: ast.AST) -> list[str]:
        """Names loaded anywhere in the function outside `node`, and names an enclosing loop's next iteration
        may read before writing them (a cheap liveness estimate)."""
        inside = {id(n) for n in ast.walk(node)}
        outside = {
            n.id
            for n in _walk_user_code(self.function)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside
        }
        return sorted(outside.union(*self.loop_reads))

    def _composites(self, node: ast.If | ast.For | ast.While, body: list[ast.stmt], state: list[str]) -> list[str]:
        """The items and attributes `body` (a loop's body, or a branch's) assigns that the operator must carry:
        a loop's next iteration reads them first (`carried_composites`), or code outside `node` reads them."""
        targets = composite_targets(body, state)
        if not targets:
            return []
        inside = {id(n) for n in ast.walk(node)}
        read_outside = {
            ast.unparse(n)
            for n in _walk_user_code(self.function)
            if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Load) and id(n) not in inside
        }
        carried = carried_composites(body, state) if not isinstance(node, ast.If) else []
        return [t for t in targets if t in carried or t in read_outside]

    def _visit_loop(self, node: ast.For | ast.While) -> None:
        """Converts the statements inside `node`, with its iterations' reads live throughout."""
        self.loop_reads.append(reads_before_writes([node])[0])
        try:
            self.generic_visit(node)
        finally:
            self.loop_reads.pop()

    @staticmethod
    def _define(names: list[str]) -> list[ast.stmt]:
        """`try: name / except NameError: name = ag__.Undefined('name')` for each state name."""
        out: list[ast.stmt] = []
        for name in names:
            out.append(
                ast.Try(
                    body=[ast.Expr(value=_name(name))],
                    handlers=[
                        ast.ExceptHandler(
                            type=_name("NameError"),
                            name=None,
                            body=[_assign(name, _call(_ag("Undefined"), ast.Constant(name)))],
                        )
                    ],
                    orelse=[],
                    finalbody=[],
                )
            )
        return out

    @staticmethod
    def _def(name: str, params: list[str], body: list[ast.stmt], returns: ast.expr) -> ast.FunctionDef:
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=p) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        return ast.FunctionDef(
            name=name,
            args=args,
            body=body + [ast.Return(value=returns)],
            decorator_list=[],
            returns=None,
            type_params=[],  # type: ignore[call-arg]  # Python 3.12+ requires it; 3.10 and 3.11 accept it
        )

    def visit_If(self, node: ast.If) -> list[ast.stmt]:
        self.generic_visit(node)
        n = next(self.counter)
        state = assigned_names(node.body + node.orelse)
        live = self._live_outside(node)
        body_fn = self._def(f"if_body__{n}", state, node.body, _tuple(state))
        else_fn = self._def(f"else_body__{n}", state, node.orelse or [ast.Pass()], _tuple(state))
        accessors, keywords = _composite_accessors(n, self._composites(node, node.body + node.orelse, state))
        call = ast.Call(
            func=_ag("if_stmt"),
            args=[node.test, _name(body_fn.name), _name(else_fn.name), _tuple(state), _strings(state), _strings(live)],
            keywords=keywords,
        )
        out = (
            self._define(state)
            + accessors
            + [
                body_fn,
                else_fn,
                ast.Assign(targets=[_tuple(state, True)], value=call) if state else ast.Expr(value=call),
            ]
        )
        return _located(out, node)

    def visit_While(self, node: ast.While) -> list[ast.stmt] | ast.While:
        self._visit_loop(node)
        if node.orelse:
            return node
        n = next(self.counter)
        state = assigned_names(node.body)
        live = self._live_outside(node)
        test_fn = self._def(f"loop_test__{n}", state, [], node.test)
        body_fn = self._def(f"loop_body__{n}", state, node.body, _tuple(state))
        accessors, keywords = _composite_accessors(n, self._composites(node, node.body, state))
        call = ast.Call(
            func=_ag("while_stmt"),
            args=[_name(test_fn.name), _name(body_fn.name), _tuple(state), _strings(state), _strings(live)],
            keywords=keywords,
        )
        out = (
            self._define(state)
            + accessors
            + [
                test_fn,
                body_fn,
                ast.Assign(targets=[_tuple(state, True)], value=call) if state else ast.Expr(value=call),
            ]
        )
        return _located(out, node)

    def visit_For(self, node: ast.For) -> list[ast.stmt] | ast.For:
        self._visit_loop(node)
        if node.orelse:
            return node
        n = next(self.counter)
        state = assigned_names([ast.Assign(targets=[node.target], value=ast.Constant(0))] + node.body)
        live = self._live_outside(node)
        item = f"item__{n}"
        body = [ast.Assign(targets=[node.target], value=_name(item))] + node.body
        body_fn = self._def(f"loop_body__{n}", [item] + state, body, _tuple(state))
        stops = self.stops.get(node, [])
        extra: ast.expr = ast.Constant(None)
        out = self._define(state)
        if stops:
            test_fn = self._def(f"extra_test__{n}", state, [], _Jumps._none_set(stops))
            out.append(test_fn)
            extra = _name(test_fn.name)
        iterated = node.iter
        if (
            isinstance(iterated, ast.Call)
            and not any(isinstance(a, ast.Starred) for a in iterated.args)
            and (
                isinstance(iterated.func, ast.Name)
                and iterated.func.id == "range"
                or isinstance(iterated.func, ast.Attribute)
                and iterated.func.attr == "range"
            )
        ):
            # `range(n)` / `tf.range(n)`: the operator decides (a tensor bound counts without materialising).
            iterated = ast.Call(
                func=_ag("range_call"), args=[iterated.func] + iterated.args, keywords=iterated.keywords
            )
        # The loop target as a function of an element (`for x, y in ...`: `(x, y)`), so a loop over runs of
        # differently shaped elements (a dataset's last batch) can start the target from the run's element.
        targets = assigned_names([ast.Assign(targets=[node.target], value=ast.Constant(0))])
        target_fn = self._def(
            f"loop_target__{n}", [item], [ast.Assign(targets=[node.target], value=_name(item))], _tuple(targets)
        )
        out.append(target_fn)
        accessors, keywords = _composite_accessors(n, self._composites(node, node.body, state))
        out += accessors
        call = ast.Call(
            func=_ag("for_stmt"),
            args=[iterated, extra, _name(body_fn.name), _tuple(state), _strings(state), _strings(live)],
            keywords=[
                ast.keyword(
                    arg="target", value=ast.Tuple(elts=[_name(target_fn.name), _strings(targets)], ctx=ast.Load())
                )
            ]
            + keywords,
        )
        out += [body_fn, ast.Assign(targets=[_tuple(state, True)], value=call) if state else ast.Expr(value=call)]
        return _located(out, node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if node is self.function:
            self.generic_visit(node)
        return node  # nested functions are converted when called (`converted_call`)

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        return node


class _Expressions(ast.NodeTransformer):
    """Pass 3: `and`/`or`/`not` with lazy operands, and calls through `ag__.converted_call`."""

    def __init__(self, function: ast.FunctionDef) -> None:
        self.function = function

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        op = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(_ag(op), ast.Lambda(args=_no_args(), body=value), ast.Lambda(args=_no_args(), body=result))
        return _at(result, node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        call = _call(
            _ag("if_exp"),
            node.test,
            ast.Lambda(args=_no_args(), body=node.body),
            ast.Lambda(args=_no_args(), body=node.orelse),
        )
        return _at(call, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _at(_call(_ag("not_"), node.operand), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        """`a < b <= c`: `ag__.compare_chain(("Lt", "LtE"), (lambda: a, lambda: b, lambda: c))`, as TF's
        `a < b and b <= c`."""
        self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        operands = [ast.Lambda(args=_no_args(), body=operand) for operand in [node.left] + node.comparators]
        call = _call(
            _ag("compare_chain"),
            _strings(type(op).__name__ for op in node.ops),
            ast.Tuple(elts=list(operands), ctx=ast.Load()),
        )
        return _at(call, node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and (node.func.value.id == "ag__")
        ):
            return node  # an operator call made by the rewrite
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            if not node.args and self.function.args.args:
                # Zero-argument super() reads the calling frame's first argument: in a generated branch or
                # loop function that is not `self`, so the converted code names both.
                node.args = [_name("__class__"), _name(self.function.args.args[0].arg)]
            return node
        call = ast.Call(func=_ag("converted_call"), args=[node.func] + node.args, keywords=node.keywords)
        return _at(call, node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if node is self.function or node.name.startswith(_GENERATED_FUNCTIONS):
            self.generic_visit(node)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        self.generic_visit(node)  # a lambda's body is converted with the function, as TF's AutoGraph does
        return node


def _composite_accessors(n: int, composites: list[str]) -> tuple[list[ast.stmt], list[ast.keyword]]:
    """A getter and a setter of the items and attributes a statement carries, and the operator's keyword.

    `get_composites__N()` gives their values (`ag__.Undefined` for one that does not exist yet);
    `set_composites__N(values)` assigns them (deletes one whose value is `Undefined`), as TF's AutoGraph's
    `get_state`/`set_state`. The operator's keyword is `composites=(getter, setter, names)`.
    """
    if not composites:
        return [], []
    loads = ", ".join(f"ag__.load_or_undefined(lambda: {c}, {c!r})" for c in composites)
    lines = [f"def get_composites__{n}():", f"    return ({loads},)", f"def set_composites__{n}(values__):"]
    for i, c in enumerate(composites):
        lines += [
            f"    if ag__.is_defined(values__[{i}]):",
            f"        {c} = values__[{i}]",
            "    else:",
            "        try:",
            f"            del {c}",
            "        except (AttributeError, IndexError, KeyError, NameError, TypeError):",
            "            pass",
        ]
    accessors = ast.parse("\n".join(lines)).body
    for node in accessors:
        for child in ast.walk(node):
            for attribute in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
                if hasattr(child, attribute):
                    delattr(child, attribute)
    value = ast.Tuple(elts=[_name(f"get_composites__{n}"), _name(f"set_composites__{n}"), _strings(composites)])
    value.ctx = ast.Load()
    return accessors, [ast.keyword(arg="composites", value=value)]


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def transform(function: ast.FunctionDef) -> ast.FunctionDef:
    """Rewrites `function` (in place) into its AutoGraph form; returns it.

    Functions defined inside it are rewritten too (as TF converts the whole source), so
    that a nested function passed to `tf.while_loop`, say, is converted without a call.
    """
    for node in list(_walk_scope(function)):
        if isinstance(node, ast.FunctionDef):
            transform(node)
    jumps = _Jumps()
    jumps.function(function)
    _ControlFlow(function, jumps.stops).visit(function)
    _Expressions(function).visit(function)
    ast.fix_missing_locations(function)
    return function
