package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

// diagnoseExport is `ksync diagnose -o json|yaml`.
type diagnoseExport struct {
	Namespace   string               `json:"namespace"`
	Application string               `json:"application"`
	Health      syncv1.HealthState   `json:"health,omitempty"`
	Revision    string               `json:"revision"`
	Phase       syncv1.RevisionPhase `json:"phase,omitempty"`
	Failure     *metav1.Condition    `json:"failure,omitempty"`
	Diagnosis   *syncv1.Diagnosis    `json:"diagnosis,omitempty"`
}

func diagnoseCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputJSON, outputYAML}
	return &cli.Command{
		Name:      "diagnose",
		Usage:     "print the latest failure of an Application and the causal chains in status.diagnosis; exits 1 unless it is Healthy",
		ArgsUsage: "<application>",
		Flags: append(clusterFlags(),
			revisionFlag("Revision to show (default status.desiredRevision)"),
			outputFlag(formats...),
		),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			_, app, rev, err := e.revision(c)
			if err != nil {
				return err
			}
			if format != outputTable {
				err = e.encode(format, diagnoseExport{
					Namespace: app.Namespace, Application: app.Name, Health: app.Status.Health,
					Revision: rev.Name, Phase: rev.Status.Phase, Failure: printers.Failure(rev), Diagnosis: rev.Status.Diagnosis,
				})
			} else {
				err = printers.Diagnosis(e.out, app, rev, e.printOptions(false, false))
			}
			if err != nil {
				return err
			}
			return unhealthy(app)
		},
	}
}

// unhealthy fails the command unless the Application is Healthy, so that
// scripts can rely on the exit code.
func unhealthy(app *syncv1.Application) error {
	if app.Status.Health == syncv1.HealthHealthy {
		return nil
	}
	health := string(app.Status.Health)
	if health == "" {
		health = "not yet reported"
	}
	return fmt.Errorf("Application %s/%s is not Healthy (health %s)", app.Namespace, app.Name, health)
}
