package manager

// InstallName is the name of the service's Deployment and ServiceAccount in
// the raw manifests (deploy/), as the operations guide prints it, and the
// default name of its leader-election Lease. The sync-controller is the
// guide's "controller manager".
func InstallName(service string) string {
	if service == "sync-controller" {
		return "kuvryn-sync-controller-manager"
	}
	return "kuvryn-sync-" + service
}
