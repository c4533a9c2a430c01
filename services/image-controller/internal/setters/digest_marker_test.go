package setters

import "testing"

// Flux users pin a kustomization's images by digest with ns:policy:digest
// markers next to the :name and :tag ones; each writes only its part.
func TestApply_DigestMarkersWriteTheDigest(t *testing.T) {
	oldDigest := "sha256:" + sixtyFour("0")
	newDigest := "sha256:" + sixtyFour("a")
	noDigest := map[string]Image{"api": {Name: "ghcr.io/acme/api", Tag: "1.2.0"}}
	for _, tc := range []applyCase{
		{
			name: "kustomization images: name, newName, newTag, digest and newDigest",
			in: "apiVersion: kustomize.config.k8s.io/v1beta1\n" +
				"kind: Kustomization\n" +
				"resources:\n" +
				"  - deployment.yaml\n" +
				"images:\n" +
				"  - name: api # the container's image\n" +
				"    newName: ghcr.io/old/api # {\"$imagepolicy\": \"payments:api:name\"}\n" +
				"    newTag: 1.0.0 # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"  - name: api-pinned\n" +
				"    newName: ghcr.io/acme/api\n" +
				"    digest: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n" +
				"  - name: api-flux\n" +
				"    newDigest: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n",
			want: "apiVersion: kustomize.config.k8s.io/v1beta1\n" +
				"kind: Kustomization\n" +
				"resources:\n" +
				"  - deployment.yaml\n" +
				"images:\n" +
				"  - name: api # the container's image\n" +
				"    newName: ghcr.io/acme/api # {\"$imagepolicy\": \"payments:api:name\"}\n" +
				"    newTag: 1.2.0 # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"  - name: api-pinned\n" +
				"    newName: ghcr.io/acme/api\n" +
				"    digest: " + newDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n" +
				"  - name: api-flux\n" +
				"    newDigest: " + newDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n",
			changed: 4,
		},
		{
			name: "quotes, tabs and CRLF line endings kept",
			in: "images:\r\n" +
				"- name: api\r\n" +
				"  newDigest: '" + oldDigest + "'\t# {\"$imagepolicy\":\"payments:api:digest\"}\r\n" +
				"  digest:   \"" + oldDigest + "\"   # {\"$imagepolicy\": \"payments:api:digest\"}\r\n",
			want: "images:\r\n" +
				"- name: api\r\n" +
				"  newDigest: '" + newDigest + "'\t# {\"$imagepolicy\":\"payments:api:digest\"}\r\n" +
				"  digest:   \"" + newDigest + "\"   # {\"$imagepolicy\": \"payments:api:digest\"}\r\n",
			changed: 2,
		},
		{
			name: "Helm values with a digest next to a tag, no trailing newline",
			in: "image:\n  repository: ghcr.io/acme/api\n" +
				"  tag: \"1.0.0\" # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"  digest: \"\" # {\"$imagepolicy\": \"payments:api:digest\"}",
			want: "image:\n  repository: ghcr.io/acme/api\n" +
				"  tag: \"1.2.0\" # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"  digest: \"" + newDigest + "\" # {\"$imagepolicy\": \"payments:api:digest\"}",
			changed: 2,
		},
		{
			name: "already the selected digest is no change",
			in:   "digest: " + newDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n",
			want: "digest: " + newDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n",
		},
		{
			name: "an image selected without digest leaves digest markers alone and reports them",
			in: "newTag: 1.0.0 # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"digest: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n",
			want: "newTag: 1.2.0 # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"digest: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:digest\"}\n",
			images:     noDigest,
			changed:    1,
			unresolved: []int{2},
		},
		{
			name: "four parts, another case or an empty third part are not markers",
			in: "a: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:digest:x\"}\n" +
				"b: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:Digest\"}\n" +
				"c: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:\"}\n",
			want: "a: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:digest:x\"}\n" +
				"b: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:Digest\"}\n" +
				"c: " + oldDigest + " # {\"$imagepolicy\": \"payments:api:\"}\n",
		},
	} {
		t.Run(tc.name, tc.check)
	}
}
