package printers

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Values that must never reach the output in these tests.
var plaintexts = []string{"hunter2", "czNjcjN0", "AKIAEXAMPLE", "-----BEGIN", "line-two-of-key", "top-secret"}

func TestConcealSecretValues_HidesEveryUnredactedValueOfASecret(t *testing.T) {
	cases := []struct {
		name   string
		entry  syncv1.PlanEntry
		hidden int
		keep   []string // lines that must survive unchanged
	}{
		{
			name: "redacted markers pass untouched",
			entry: secretEntry(`--- live
+++ desired
@@ -1,5 +1,6 @@
 apiVersion: v1
 data:
-  password: '*** (old value)'
+  password: '*** (new value)'
+  token: '***'
   username: '*** (unchanged)'
 kind: Secret
`),
			keep: []string{"-  password: '*** (old value)'", "+  token: '***'", "   username: '*** (unchanged)'"},
		},
		{
			name: "raw data and stringData values are hidden",
			entry: secretEntry(`--- live
+++ desired
@@ -1,9 +1,9 @@
 apiVersion: v1
 data:
-  password: aHVudGVyMg==
+  password: czNjcjN0
 kind: Secret
 metadata:
   name: db
 stringData:
+  token: AKIAEXAMPLE
 type: Opaque
`),
			hidden: 3,
			keep:   []string{" kind: Secret", "   name: db", " type: Opaque"},
		},
		{
			name: "a hunk starting inside data hides values until a top-level key",
			entry: secretEntry(`--- live
+++ desired
@@ -12,4 +12,4 @@
   other: hunter2
-  password: '*** (old value)'
+  password: top-secret
 kind: Secret
 metadata:
   name: db
`),
			hidden: 2,
			keep:   []string{"-  password: '*** (old value)'", " kind: Secret", "   name: db"},
		},
		{
			name: "block scalars are hidden with every line below them",
			entry: secretEntry(`--- live
+++ desired
@@ -1,6 +1,6 @@
 apiVersion: v1
 stringData:
+  tls.key: |
+    -----BEGIN PRIVATE KEY-----
+    line-two-of-key
 type: kubernetes.io/tls
`),
			hidden: 3,
			keep:   []string{" type: kubernetes.io/tls"},
		},
		{
			name: "the last-applied annotation is hidden, folded lines included",
			entry: secretEntry(`--- live
+++ desired
@@ -3,6 +3,6 @@
 kind: Secret
 metadata:
   annotations:
+    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"czNjcjN0"},
+      "kind":"Secret","stringData":{"x":"top-secret"}}'
   name: db
`),
			hidden: 2,
			keep:   []string{"   annotations:", "   name: db"},
		},
		{
			name: "a whole data field that is not a map is hidden",
			entry: secretEntry(`--- live
+++ desired
@@ -1,3 +1,3 @@
 apiVersion: v1
-data: hunter2
+data: '***'
 kind: Secret
`),
			hidden: 1,
			keep:   []string{"+data: '***'"},
		},
		{
			name: "a value merely starting with the marker is hidden",
			entry: secretEntry(`--- live
+++ desired
@@ -1,3 +1,3 @@
 data:
+  password: '***top-secret'
 kind: Secret
`),
			hidden: 1,
		},
		{
			name: "a Secret kind of another group is guarded too",
			entry: syncv1.PlanEntry{
				ObjectRef: syncv1.ObjectRef{Group: "example.com", Kind: "Secret", Name: "x"},
				Diff:      "@@ -1,2 +1,2 @@\n data:\n+  key: hunter2\n",
			},
			hidden: 1,
		},
		{
			name: "other kinds are not touched",
			entry: syncv1.PlanEntry{
				ObjectRef: syncv1.ObjectRef{Kind: "ConfigMap", Name: "x"},
				Diff:      "@@ -1,2 +1,2 @@\n data:\n+  mode: fast\n",
			},
			keep: []string{"+  mode: fast"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := syncv1.Plan{Digest: digest1, Entries: []syncv1.PlanEntry{tc.entry}}
			out, hidden := ConcealSecretValues(in)
			if hidden != tc.hidden {
				t.Errorf("hid %d values, want %d", hidden, tc.hidden)
			}
			if in.Entries[0].Diff != tc.entry.Diff {
				t.Error("the input plan was modified")
			}
			diff := out.Entries[0].Diff
			for _, p := range plaintexts {
				if strings.Contains(diff, p) {
					t.Errorf("diff still shows %q:\n%s", p, diff)
				}
			}
			lines := strings.Split(diff, "\n")
			for _, k := range tc.keep {
				if !containsLine(lines, k) {
					t.Errorf("diff lost line %q:\n%s", k, diff)
				}
			}
			if len(lines) != len(strings.Split(tc.entry.Diff, "\n")) {
				t.Errorf("diff has %d lines, want as many as the input:\n%s", len(lines), diff)
			}
		})
	}
}

func secretEntry(diff string) syncv1.PlanEntry {
	return syncv1.PlanEntry{
		ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Secret", Namespace: "payments", Name: "db"},
		Action:    syncv1.ActionUpdate,
		Diff:      diff,
	}
}

func containsLine(lines []string, line string) bool {
	for _, l := range lines {
		if l == line {
			return true
		}
	}
	return false
}
