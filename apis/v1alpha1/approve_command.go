package v1alpha1

import "fmt"

// ApproveCommand is the ksync command that approves the Application's
// Revision named revision, as every service, the console and the CLI print
// it. It names the Revision: a hint is read later than it is written, and
// without --revision ksync approves whatever is desired by then, a plan the
// reader never saw. With it, ksync approves that Revision or, once it no
// longer waits for approval, refuses and says why.
func (a *Application) ApproveCommand(revision string) string {
	return fmt.Sprintf("ksync approve %s -n %s --revision %s", a.Name, a.Namespace, revision)
}
