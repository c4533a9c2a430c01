package setters

import "testing"

// A block scalar's text ends at the first line indented no deeper than its
// key, so a marker after it in the same sequence item is YAML again; markers
// in the text itself stay text.
func TestApply_MarkersAfterABlockScalarInTheSameItem(t *testing.T) {
	apiFull := "ghcr.io/acme/api:1.2.0@sha256:" + sixtyFour("a")
	const mark = ` # {"$imagepolicy": "payments:api"}`
	const tagMark = ` # {"$imagepolicy": "payments:api:tag"}`
	// patched is a kustomization whose patch text holds a marker, as text,
	// and whose target then holds a marked image.
	patched := func(targetImage string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\n" +
			"kind: Kustomization\n" +
			"resources:\n  - ../base\n" +
			"patches:\n" +
			"  - patch: |\n" +
			"      - op: replace\n" +
			"        path: /spec/template/spec/containers/0/image\n" +
			"        value: ghcr.io/acme/api:1.0.0" + mark + "\n" +
			"\n" +
			"    target:\n" +
			"      kind: Deployment\n" +
			"      image: " + targetImage + mark + "\n" +
			"  - path: other.yaml\n"
	}
	for _, tc := range []applyCase{
		{
			name:    "kustomization patch followed by a target with a marked image (flux2#3284)",
			in:      patched("ghcr.io/acme/api:1.0.0"),
			want:    patched(apiFull),
			changed: 1,
		},
		{
			name: "chomping indicators, a folded block and a sibling key after the text",
			in: "- patch: |-\n    a: x:1" + mark + "\n  tag: 1.0.0" + tagMark + "\n" +
				"- name: b\n  patch: >+\n    text x:1" + mark + "\n  tag: 1.0.0" + tagMark + "\n" +
				"- patch: |2\n     indented: x:1" + mark + "\n  tag: 1.0.0" + tagMark + "\n",
			want: "- patch: |-\n    a: x:1" + mark + "\n  tag: 1.2.0" + tagMark + "\n" +
				"- name: b\n  patch: >+\n    text x:1" + mark + "\n  tag: 1.2.0" + tagMark + "\n" +
				"- patch: |2\n     indented: x:1" + mark + "\n  tag: 1.2.0" + tagMark + "\n",
			changed: 3,
		},
		{
			name: "CRLF line endings and a comment line ending the text",
			in: "patches:\r\n- patch: |\r\n    value: x:1" + mark + "\r\n  # the target\r\n" +
				"  target:\r\n    image: x:1" + mark + "\r\n",
			want: "patches:\r\n- patch: |\r\n    value: x:1" + mark + "\r\n  # the target\r\n" +
				"  target:\r\n    image: " + apiFull + mark + "\r\n",
			changed: 1,
		},
		{
			name:    "nested sequences: the text of - - | ends at the inner dash",
			in:      "- - |\n    x:1" + mark + "\n  - x:1" + mark + "\n",
			want:    "- - |\n    x:1" + mark + "\n  - " + apiFull + mark + "\n",
			changed: 1,
		},
		{
			name:    "text lines only one column deeper than the key are still text",
			in:      "  - patch: |\n     image: x:1" + mark + "\n    image: x:1" + mark + "\n",
			want:    "  - patch: |\n     image: x:1" + mark + "\n    image: " + apiFull + mark + "\n",
			changed: 1,
		},
		{
			name: "a tag, an anchor or both before the indicator",
			in: "- patch: !!str |\n    a: x:1" + mark + "\n  tag: 1.0.0" + tagMark + "\n" +
				"- patch: &text >-\n    a: x:1" + mark + "\n  tag: 1.0.0" + tagMark + "\n" +
				"- patch: !!str &text |\n    a: x:1" + mark + "\n  tag: 1.0.0" + tagMark + "\n",
			want: "- patch: !!str |\n    a: x:1" + mark + "\n  tag: 1.2.0" + tagMark + "\n" +
				"- patch: &text >-\n    a: x:1" + mark + "\n  tag: 1.2.0" + tagMark + "\n" +
				"- patch: !!str &text |\n    a: x:1" + mark + "\n  tag: 1.2.0" + tagMark + "\n",
			changed: 3,
		},
		{
			name: "a marker on the block header's line is not a value",
			in:   "- patch: |" + mark + "\n    image: x:1" + mark + "\n",
			want: "- patch: |" + mark + "\n    image: x:1" + mark + "\n",
		},
	} {
		t.Run(tc.name, tc.check)
	}
}
