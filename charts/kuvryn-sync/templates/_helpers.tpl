{{/*
The services in install order, with their values key. Names match
deploy/<name> and the ServiceAccounts kuvryn-<name>.
*/}}
{{- define "kuvryn-sync.services" -}}
- {name: source-controller, key: sourceController}
- {name: sync-controller, key: syncController}
- {name: image-controller, key: imageController}
- {name: notify-controller, key: notifyController}
- {name: web, key: web}
{{- end }}

{{/*
"true" when the service named by the argument's .name is enabled, else "".
Called with (dict "root" $ "svc" <entry of kuvryn-sync.services>).
*/}}
{{- define "kuvryn-sync.enabled" -}}
{{- $v := index .root.Values .svc.key -}}
{{- if or $v.enabled (and (eq .svc.name "web") .root.Values.console.enabled) -}}true{{- end -}}
{{- end }}

{{/* "true" when the admission webhook is installed. */}}
{{- define "kuvryn-sync.webhookEnabled" -}}
{{- if and .Values.syncController.enabled .Values.syncController.webhook.enabled -}}true{{- end -}}
{{- end }}

{{/* Selector labels of one service; the same as in deploy/<name>. */}}
{{- define "kuvryn-sync.selectorLabels" -}}
app.kubernetes.io/name: kuvryn-sync
app.kubernetes.io/component: {{ . }}
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
