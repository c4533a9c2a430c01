package printers

import (
	"io"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Repositories writes the table of `ksync repos`: NAME, URL, REVISION,
// COMMIT (12 characters), READY, AGE; wide adds FETCHED and MESSAGE, the
// Ready condition's message.
func Repositories(w io.Writer, repos []syncv1.Repository, o Options) error {
	t := Table{Header: []string{"NAME", "URL", "REVISION", "COMMIT", "READY", "AGE"}}
	if o.Wide {
		t.Header = append(t.Header, "FETCHED", "MESSAGE")
	}
	if o.AllNamespaces {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
	}
	for _, repo := range repos {
		var commit, fetched string
		if a := repo.Status.Artifact; a != nil {
			commit = ShortCommit(a.Commit)
			fetched = Age(a.FetchedAt, o.Now)
		}
		row := []Cell{
			Plain(repo.Name),
			Plain(repo.Spec.Git.URL),
			Plain(repo.Spec.Git.Revision),
			Plain(commit),
			conditionCell(repo.Status.Conditions, syncv1.ConditionReady),
			Plain(Age(repo.CreationTimestamp, o.Now)),
		}
		if o.Wide {
			row = append(row, Plain(fetched), Plain(conditionMessage(repo.Status.Conditions, syncv1.ConditionReady)))
		}
		if o.AllNamespaces {
			row = append([]Cell{Plain(repo.Namespace)}, row...)
		}
		t.Add(row...)
	}
	return t.Write(w, o.Color)
}
