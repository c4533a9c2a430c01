// Command image-controller scans registries for ImagePolicies and commits
// the selected images back to Git.
package main

import "github.com/kuvryn/kuvryn-sync/pkg/manager"

func main() {
	manager.Main(manager.Service{Name: "image-controller"}, nil)
}
