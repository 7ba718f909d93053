"""The controller differential suite: scenarios recorded against the Go kube-controller-manager
on a real kube-apiserver, replayed with kcm's controllers on the embedded server. See README.md."""
