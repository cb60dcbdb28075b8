{{/* Names and labels shared by every object of the chart. */}}

{{- define "yarn-advisor.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "yarn-advisor.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "yarn-advisor.selectorLabels" -}}
app.kubernetes.io/name: {{ include "yarn-advisor.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "yarn-advisor.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "yarn-advisor.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "yarn-advisor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "yarn-advisor.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Replicas: replicaCount, else 2 with HA (ZooKeeper leader election), else 1.
     More than one advisor without HA would mean two writers: refused. */}}
{{- define "yarn-advisor.replicas" -}}
{{- $n := ternary 2 1 .Values.ha.enabled }}
{{- if not (kindIs "invalid" .Values.replicaCount) }}
{{- $n = int .Values.replicaCount }}
{{- end }}
{{- if and (gt $n 1) (not .Values.ha.enabled) }}
{{- fail "replicaCount > 1 needs ha.enabled (ZooKeeper leader election): two advisors without it would both write to the RM" }}
{{- end }}
{{- $n }}
{{- end }}

{{- define "yarn-advisor.keytabSecret" -}}
{{- .Values.kerberos.existingSecret | default (printf "%s-keytab" (include "yarn-advisor.fullname" .)) }}
{{- end }}

{{- define "yarn-advisor.tlsSecret" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "yarn-advisor.fullname" .)) }}
{{- end }}

{{/* The advisor's configuration: .Values.config with what the chart owns set
     on top (where it listens, where it keeps its state, the mounted TLS and
     Kerberos files, HA). */}}
{{- define "yarn-advisor.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) }}
{{- $_ := set $cfg "server" (dict "enabled" true "host" "0.0.0.0" "port" (int .Values.service.port)) }}
{{- $_ := set $cfg "state_dir" "/var/lib/yarn-advisor" }}
{{- $rm := get $cfg "rm" | default dict }}
{{- if .Values.tls.enabled }}
{{- $tls := get $rm "tls" | default dict }}
{{- $_ := set $tls "ca_bundle" "/etc/yarn-advisor/tls/ca.crt" }}
{{- if .Values.tls.clientCertificate }}
{{- $_ := set $tls "client_cert" "/etc/yarn-advisor/tls/tls.crt" }}
{{- $_ := set $tls "client_key" "/etc/yarn-advisor/tls/tls.key" }}
{{- end }}
{{- $_ := set $rm "tls" $tls }}
{{- end }}
{{- if .Values.kerberos.enabled }}
{{- $auth := get $rm "auth" | default dict }}
{{- $_ := set $auth "method" "kerberos" }}
{{- if .Values.kerberos.principal }}
{{- $_ := set $auth "principal" .Values.kerberos.principal }}
{{- end }}
{{- $_ := set $rm "auth" $auth }}
{{- end }}
{{- if $rm }}
{{- $_ := set $cfg "rm" $rm }}
{{- end }}
{{- if .Values.ha.enabled }}
{{- $zk := dict "hosts" .Values.ha.zookeeper.hosts "path" .Values.ha.zookeeper.path "session_timeout_s" .Values.ha.zookeeper.sessionTimeoutSeconds }}
{{- $_ := set $cfg "ha" (dict "zookeeper" $zk) }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}
