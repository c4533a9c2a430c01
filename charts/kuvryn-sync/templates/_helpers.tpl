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
app.kubernetes.io/name: kuvryn-sync
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{/* Labels of every object. Called with (dict "root" $ "component" <name>). */}}
{{- define "kuvryn-sync.labels" -}}
app.kubernetes.io/name: kuvryn-sync
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
