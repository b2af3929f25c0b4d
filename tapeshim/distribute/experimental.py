"""`tf.distribute.experimental`."""

from tapeshim._src.distribute.multi_worker import (
    CentralStorageStrategy,
    CommunicationImplementation,
    CommunicationOptions,
    MultiWorkerMirroredStrategy,
    ParameterServerStrategy,
    TPUStrategy,
)
from tapeshim._src.distribute.strategy import ValueContext

CollectiveCommunication = CommunicationImplementation

__all__ = [
    "CentralStorageStrategy",
    "CollectiveCommunication",
    "CommunicationImplementation",
    "CommunicationOptions",
    "MultiWorkerMirroredStrategy",
    "ParameterServerStrategy",
    "TPUStrategy",
    "ValueContext",
]
