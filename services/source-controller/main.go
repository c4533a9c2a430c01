// Command source-controller fetches Repositories, renders Applications into
// Revisions and discovers Applications from .ksync.yaml files.
package main

import "github.com/kuvryn/kuvryn-sync/pkg/manager"

func main() {
	manager.Main(manager.Service{Name: "source-controller"}, nil)
}
