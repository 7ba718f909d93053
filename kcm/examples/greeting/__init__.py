"""The tutorial's controller: a ``Greeting`` custom resource and the controller that answers it.

``api`` holds the resource (step 2), ``reconciler`` the controller (step 3), ``main`` runs it
(step 4: ``python -m kcm.examples.greeting --once``) and prints the manifests that deploy it
(step 6: ``python -m kcm.examples.greeting manifests``).
"""

__all__: list[str] = []
