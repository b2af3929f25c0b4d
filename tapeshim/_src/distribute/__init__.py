"""`tf.distribute` on JAX's SPMD machinery: meshes, `jax.shard_map` and `jax.distributed`."""

from tapeshim._src.distribute.strategy import install_variable_hooks

install_variable_hooks()
