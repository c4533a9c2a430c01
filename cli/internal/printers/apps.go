package printers

import (
	"io"
	"strconv"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Applications writes the table of `ksync apps`: NAME, SYNC, HEALTH, PHASE,
// DESIRED, DEPLOYED, AGE; wide adds REPOSITORY, PATH, AUTOMATIC and SHARD
// (the sync.kuvryn.io/shard label; empty is the default shard).
func Applications(w io.Writer, apps []syncv1.Application, o Options) error {
	t := Table{Header: []string{"NAME", "SYNC", "HEALTH", "PHASE", "DESIRED", "DEPLOYED", "AGE"}}
	if o.Wide {
		t.Header = append(t.Header, "REPOSITORY", "PATH", "AUTOMATIC", "SHARD")
	}
	if o.AllNamespaces {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
	}
	for _, app := range apps {
		row := []Cell{
			Plain(app.Name),
			syncCell(app.Status.Sync),
			healthCell(app.Status.Health),
			phaseCell(app.Status.Phase),
			Plain(app.Status.DesiredRevision),
			Plain(app.Status.DeployedRevision),
			Plain(Age(app.CreationTimestamp, o.Now)),
		}
		if o.Wide {
			path := app.Spec.Source.Path
			if path == "" {
				path = "."
			}
			row = append(row,
				Plain(app.Spec.Source.RepositoryRef.Name),
				Plain(path),
				Plain(strconv.FormatBool(app.Spec.Sync.Automatic)),
				Plain(syncv1.ShardOf(app.Labels)),
			)
		}
		if o.AllNamespaces {
			row = append([]Cell{Plain(app.Namespace)}, row...)
		}
		t.Add(row...)
	}
	return t.Write(w, o.Color)
}
