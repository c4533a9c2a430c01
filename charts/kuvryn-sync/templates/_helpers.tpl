{{/*
The services in install order, with their values key, the suffix of their
names after <release>-kuvryn-sync (the sync-controller, the guide's
controller manager, takes the bare prefix) and the image holding their
binary (kuvryn-sync-<image>, built from Dockerfile.<image>).
*/}}
{{- define "kuvryn-sync.services" -}}
- {name: source-controller, key: sourceController, suffix: -source, image: source}
- {name: sync-controller, key: syncController, suffix: "", image: sync}
- {name: image-controller, key: imageController, suffix: -image, image: source}
- {name: notify-controller, key: notifyController, suffix: -notify, image: sync}
- {name: web, key: web, suffix: -web, image: web}
{{- end }}

{{/*
<release>-kuvryn-sync, the prefix of every name the chart renders, as the
operations guide prints it (kuvryn-sync-kuvryn-sync for the release
kuvryn-sync).
*/}}
{{- define "kuvryn-sync.fullname" -}}
{{- printf "%s-kuvryn-sync" .Release.Name -}}
{{- end }}

{{/*
The Deployment and ServiceAccount name of one service. Called with
(dict "root" $ "svc" <entry of kuvryn-sync.services>).
*/}}
{{- define "kuvryn-sync.name" -}}
{{- printf "%s%s" (include "kuvryn-sync.fullname" .root) .svc.suffix -}}
{{- end }}

{{/*
"true" when the service named by the argument's .name is enabled, else "".
The web service also runs for the console and for the webhook receiver.
Called with (dict "root" $ "svc" <entry of kuvryn-sync.services>).
*/}}
{{- define "kuvryn-sync.enabled" -}}
{{- $v := index .root.Values .svc.key -}}
{{- $web := and (eq .svc.name "web") (or .root.Values.console.enabled .root.Values.webhookReceiver.enabled) -}}
{{- if or $v.enabled $web -}}true{{- end -}}
{{- end }}

{{/* "true" when the admission webhook is installed. */}}
{{- define "kuvryn-sync.webhookEnabled" -}}
{{- if and .Values.syncController.enabled .Values.syncController.webhook.enabled -}}true{{- end -}}
{{- end }}

{{/* The Secret holding the webhook server's certificate. */}}
{{- define "kuvryn-sync.webhookCertSecret" -}}
{{- .Values.syncController.webhook.certSecretName | default (printf "%s-webhook-cert" (include "kuvryn-sync.fullname" .)) -}}
{{- end }}

{{/*
Selector labels of one service: those of deploy/<name> and the release, so
that two releases never select each other's Pods. Called with
(dict "root" $ "component" <name>).
*/}}
{{- define "kuvryn-sync.selectorLabels" -}}
{{- if .shard }}
app.kubernetes.io/name: kuvryn-sync-shard
sync.kuvryn.io/shard: {{ .shard | quote }}
{{- else }}
app.kubernetes.io/name: kuvryn-sync
{{- end }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{/*
What a Service of one service selects: its Pods of every shard (the default
one's and each shard Deployment's), which differ in app.kubernetes.io/name so
that no Deployment's selector matches another's Pods. Called with
(dict "root" $ "component" <name>).
*/}}
{{- define "kuvryn-sync.serviceSelector" -}}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{/*
Labels of every object; with a shard, those of the shard's Deployment and
Pods. Called with (dict "root" $ "component" <name>) and optionally
"shard" <shard>.
*/}}
{{- define "kuvryn-sync.labels" -}}
{{- if .shard }}
app.kubernetes.io/name: kuvryn-sync-shard
sync.kuvryn.io/shard: {{ .shard | quote }}
{{- else }}
app.kubernetes.io/name: kuvryn-sync
{{- end }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
The service's own value when set, else the chart-wide one. Called with
(list <service values> <key> <chart-wide value>).
*/}}
{{- define "kuvryn-sync.override" -}}
{{- $own := index (index . 0) (index . 1) -}}
{{- if kindIs "invalid" $own -}}{{ index . 2 }}{{- else -}}{{ $own }}{{- end -}}
{{- end }}

{{/*
The image reference of one service: its own image.repository, or
<image.registry>/kuvryn-sync-<image>; its own image.tag, or the chart's
appVersion. Called with (dict "root" $ "svc" <entry of kuvryn-sync.services>).
*/}}
{{- define "kuvryn-sync.image" -}}
{{- $v := (index .root.Values .svc.key).image -}}
{{- $repository := $v.repository | default (printf "%s/kuvryn-sync-%s" .root.Values.image.registry .svc.image) -}}
{{- printf "%s:%s" $repository ($v.tag | default .root.Chart.AppVersion) -}}
{{- end }}

{{/*
The shards of the shards value, checked: each becomes the label value
sync.kuvryn.io/shard and part of Deployment and Lease names, so it must be a
DNS label; the default shard (no label) always runs and has no name.
*/}}
{{- define "kuvryn-sync.shards" -}}
{{- $seen := dict -}}
{{- range $shard := .Values.shards -}}
{{- if not (kindIs "string" $shard) -}}
{{- fail (printf "shards: %v is not a shard name: write each name as a string" $shard) -}}
{{- end -}}
{{- if eq $shard "" -}}
{{- fail "shards: an empty name is the default shard (the objects without the sync.kuvryn.io/shard label), which always runs: remove it from shards" -}}
{{- end -}}
{{- if not (and (le (len $shard) 63) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $shard)) -}}
{{- fail (printf "shards: %q is not a shard name: use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit (it is the sync.kuvryn.io/shard label value and part of Deployment names)" $shard) -}}
{{- end -}}
{{- if hasKey $seen $shard -}}
{{- fail (printf "shards: %q is listed twice: each shard gets one Deployment per controller" $shard) -}}
{{- end -}}
{{- $_ := set $seen $shard true -}}
{{- end -}}
{{- toYaml (.Values.shards | default list) -}}
{{- end }}
