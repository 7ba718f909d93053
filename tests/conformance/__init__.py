"""The differential suite: scenarios recorded against a real kube-apiserver, replayed against
the embedded one. See README.md."""
