"""The seed examples from TensorFlow's autodiff guide, with only the import changed."""

import tapeshim as tf

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x**2
dy_dx = tape.gradient(y, x)
print(dy_dx.numpy())  # 6.0

x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x**3
print(tape.gradient(y, x).numpy())  # 27.0

x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    a = 3 * x + 1
    y = a**2
print("tape says :", tape.gradient(y, x).numpy())
print("by hand   :", 2 * (3 * 2.0 + 1) * 3)

c = tf.constant(3.0)
with tf.GradientTape() as tape:
    y = c**2
print("constant, not watched :", tape.gradient(y, c))  # None
with tf.GradientTape() as tape:
    tape.watch(c)
    y = c**2
print("constant, watched     :", tape.gradient(y, c).numpy())


def grad_of(x, fn):
    with tf.GradientTape() as tape:
        y = fn(x)
    return tape.gradient(y, x)


print("int variable     :", grad_of(tf.Variable(3), lambda v: v * v))  # None
print("trainable=False  :", grad_of(tf.Variable(3.0, trainable=False), lambda v: v * v))  # None
print("left TF (.numpy) :", grad_of(tf.Variable(3.0), lambda v: tf.constant(v.numpy() ** 2)))  # None
print("no-gradient op   :", grad_of(tf.Variable(3.0), lambda v: tf.round(v)))  # None

x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = x
    for _ in range(3):
        y = y * y
print("y     :", y.numpy())
print("dy/dx :", tape.gradient(y, x).numpy(), "(= 8 * 2**7)")
