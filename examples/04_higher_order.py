"""Second derivatives, jacobians and forward mode."""

import tapeshim as tf

x = tf.Variable(1.0)
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = x * x * x
    dy_dx = inner.gradient(y, x)
d2y_dx2 = outer.gradient(dy_dx, x)
print("dy/dx   :", dy_dx.numpy())
print("d2y/dx2 :", d2y_dx2.numpy())

v = tf.Variable([1.0, 2.0])
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        s = tf.reduce_sum(v**3)
    g = t1.gradient(s, v)
print("hessian :\n", t2.jacobian(g, v).numpy())

x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.nn.softmax(x)
print("batch jacobian shape:", tape.batch_jacobian(y, x).shape)

primal = tf.constant([1.0, 2.0])
with tf.autodiff.ForwardAccumulator(primal, tf.constant([1.0, 0.0])) as acc:
    with tf.GradientTape() as tape:
        tape.watch(primal)
        loss = tf.reduce_sum(primal**3)
    gradient = tape.gradient(loss, primal)
print("hessian-vector product:", acc.jvp(gradient).numpy())
