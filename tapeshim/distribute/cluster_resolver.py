"""`tf.distribute.cluster_resolver`: where the processes of a cluster are."""

from tapeshim._src.distribute.multi_worker import ClusterSpec, TFConfigClusterResolver, TPUClusterResolver

__all__ = ["ClusterSpec", "TFConfigClusterResolver", "TPUClusterResolver"]
