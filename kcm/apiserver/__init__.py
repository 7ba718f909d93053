"""An embedded, Kubernetes-compatible API server in pure Python (kcm's envtest).

``async with ApiServer() as server:`` serves the Kubernetes REST protocol on loopback, so the
kcm client, the official ``kubernetes`` client and ``kubectl`` work against it unchanged.
See docs/apiserver.md for what it implements and how it differs from kube-apiserver.
"""

from kcm._extras import require

for _module in ("hypercorn", "cryptography", "jwt"):  # one line naming the extra, not a traceback
    require(_module, extra="server", feature="the embedded API server (kcm.apiserver)")

from ._admission import DEFAULT_PLUGINS as DEFAULT_ADMISSION_PLUGINS
from ._admission import AdmissionConfigError as AdmissionConfigError
from ._admission import enabled_plugins as enabled_admission_plugins
from ._data_dir import DataDirLock as DataDirLock
from ._data_dir import DataDirLocked as DataDirLocked
from ._encryption import EncryptionConfigError as EncryptionConfigError
from ._encryption import EncryptionError as EncryptionError
from ._faults import Faults as Faults
from ._limits import Limits as Limits
from ._server import ApiServer as ApiServer

__all__ = [
    "DEFAULT_ADMISSION_PLUGINS",
    "AdmissionConfigError",
    "ApiServer",
    "DataDirLock",
    "DataDirLocked",
    "EncryptionConfigError",
    "EncryptionError",
    "Faults",
    "Limits",
    "enabled_admission_plugins",
]
