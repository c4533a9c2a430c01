package payload

import (
	"strings"
	"testing"
	"unicode/utf8"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// githubLimit is GitHub's limit on a comment, in characters.
const githubLimit = 65536

const previewCommit = "4f8e1c2d3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e"

func previewOf(state PreviewState, entries ...syncv1.PlanEntry) *Preview {
	p := &Preview{
		Application: ApplicationRef{Namespace: "shop", Name: "api"}, Revision: "api-preview-1", Name: "pr-12",
		Number: 12, Commit: previewCommit, State: state,
	}
	if state != PreviewPending {
		p.Plan = &syncv1.Plan{Digest: "sha256:" + strings.Repeat("ab", 32), Summary: syncv1.PlanSummary{Update: 1, Create: 1, Unchanged: 3}, Entries: entries}
	}
	return p
}

func entry(kind, name string, action syncv1.PlanAction, diff string) syncv1.PlanEntry {
	return syncv1.PlanEntry{ObjectRef: syncv1.ObjectRef{Kind: kind, Namespace: "shop", Name: name}, Action: action, Diff: diff}
}

const secretDiff = "--- live\n+++ desired\n@@ data @@\n-  password: " + syncv1.RedactedOldMarker + "\n+  password: " + syncv1.RedactedNewMarker + "\n"

// TestPreviewComment_Renders: the comment starts with the hidden marker,
// names the Application, the commit and the plan summary, shows each
// changed entry's action and diff verbatim (redaction markers kept), the
// withheld list, and a failure's reason and diagnosis; names and messages
// cannot inject Markdown or HTML; and it fits the host's limit, with a
// visible note when something was left out.
func TestPreviewComment_Renders(t *testing.T) {
	image := entry("Deployment", "api", syncv1.ActionUpdate, "--- live\n+++ desired\n-        image: api:1\n+        image: api:2\n")
	secret := entry("Secret", "api-db", syncv1.ActionCreate, secretDiff)
	unchanged := entry("Service", "api", syncv1.ActionUnchanged, "")
	evil := entry("ConfigMap", "x`</details><img src=x onerror=alert(1)>**bold**", syncv1.ActionCreate, "+ a: ```\n+ b: ````")
	failed := previewOf(PreviewFailure)
	failed.Plan = nil
	failed.Reason, failed.Message = "DryRunFailed", "Deployment shop/api: spec.replicas: Invalid value: -1 <script>"
	failed.Diagnosis = &syncv1.Diagnosis{Summary: "1 cause", Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{
		{ObjectRef: syncv1.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, Message: "replicas must be >= 0"}}}}}
	withheld := previewOf(PreviewSuccess, image)
	withheld.Withheld = []string{"secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)", "a_*b*_`c`.yaml"}
	many := previewOf(PreviewSuccess)
	for i := range 50 {
		many.Plan.Entries = append(many.Plan.Entries, entry("ConfigMap", "cm-"+strings.Repeat("x", i), syncv1.ActionCreate, strings.Repeat("+ line\n", 40)))
	}

	for _, tc := range []struct {
		name     string
		p        *Preview
		limit    int
		want     []string
		notWant  []string
		truncate bool
	}{
		{name: "pending", p: previewOf(PreviewPending), limit: githubLimit,
			want: []string{"### Kuvryn Sync preview of `shop/api`: planning…", "Commit `4f8e1c2d3b4a`"}, notWant: []string{"**Plan:**"}},
		{name: "planned", p: previewOf(PreviewSuccess, image, secret, unchanged), limit: githubLimit,
			want: []string{
				"**Plan:** 1 to create, 1 to update, 0 to delete, 3 unchanged",
				"#### update `Deployment` `shop/api`\n```diff\n--- live",
				"+        image: api:2\n```",
				"#### create `Secret` `shop/api-db`",
				"-  password: *** (old value)\n+  password: *** (new value)",
				"nothing was applied",
			},
			notWant: []string{"`Service`"}},
		{name: "names cannot inject markup", p: previewOf(PreviewSuccess, evil), limit: githubLimit,
			want:    []string{"#### create `ConfigMap` ``shop/x`</details><img src=x onerror=alert(1)>**bold**``", "`````diff\n+ a: ```\n+ b: ````\n`````"},
			notWant: []string{"\n</details>"}},
		{name: "failed", p: failed, limit: githubLimit,
			want: []string{"plan failed", "**Failed:** DryRunFailed: Deployment shop/api: spec\\.replicas: Invalid value: \\-1 \\<script\\>",
				"**Diagnosis:** 1 cause", "- `Deployment` `shop/api`: replicas must be \\>= 0"}},
		{name: "withheld", p: withheld, limit: githubLimit,
			want: []string{"**Withheld from this preview:**\n- `secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)`", "- ``a_*b*_`c`.yaml``"}},
		{name: "truncated to GitHub's limit keeps the marker, summary and some entries", p: many, limit: 8000, truncate: true,
			want: []string{"<!-- kuvryn-sync preview shop/api -->\n", "**Plan:**", "#### create `ConfigMap` `shop/cm-`", "more plan entries not shown; this comment is limited to 8000 characters"}},
		{name: "truncated inside the head", p: withheld, limit: 400, truncate: true,
			want: []string{"<!-- kuvryn-sync preview shop/api -->\n", "the text above was cut"}},
		{name: "fits exactly without a note", p: previewOf(PreviewSuccess, image), limit: len(PreviewComment(previewOf(PreviewSuccess, image), 1<<20)),
			notWant: []string{"Truncated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PreviewComment(tc.p, tc.limit)
			if n := utf8.RuneCountInString(got); n > tc.limit {
				t.Errorf("%d characters, over the limit %d", n, tc.limit)
			}
			if !strings.HasPrefix(got, PreviewMarker(tc.p.Application)+"\n") {
				t.Errorf("does not start with the marker:\n%s", got)
			}
			if strings.Contains(got, "**Truncated:**") != tc.truncate {
				t.Errorf("truncation note present = %v, want %v:\n%s", !tc.truncate, tc.truncate, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("holds %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestPreviewDescription_FitsGitHub: a commit status description says what
// the plan does or why it failed, on one line, in at most 140 characters.
func TestPreviewDescription_FitsGitHub(t *testing.T) {
	long := previewOf(PreviewFailure)
	long.Reason, long.Message = "DryRunFailed", strings.Repeat("ü", 300)+"\nsecond line"
	for _, tc := range []struct {
		p    *Preview
		want string
	}{
		{previewOf(PreviewPending), "planning api with a dry-run"},
		{previewOf(PreviewSuccess), "plan: 1 to create, 1 to update, 0 to delete, 3 unchanged"},
		{long, "plan failed: DryRunFailed: üü"},
	} {
		got := PreviewDescription(tc.p)
		if !strings.HasPrefix(got, tc.want) || utf8.RuneCountInString(got) > 140 || strings.Contains(got, "\n") {
			t.Errorf("PreviewDescription = %q (%d characters), want %q, one line, at most 140", got, utf8.RuneCountInString(got), tc.want)
		}
	}
}
