{{/* Chart name, overridable. */}}
{{- define "vtl.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every resource name: `<release>-<chart>` unless the release already names the chart. */}}
{{- define "vtl.fullname" -}}
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

{{/* `<chart>-<version>` for the helm.sh/chart label. */}}
{{- define "vtl.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every resource. Never use these in a selector: they carry the chart version. */}}
{{- define "vtl.labels" -}}
helm.sh/chart: {{ include "vtl.chart" . }}
{{ include "vtl.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: vtl
{{- end }}

{{/* Selector labels: stable across upgrades, so immutable selectors never change. Add app.kubernetes.io/component beside them. */}}
{{- define "vtl.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vtl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The appliance image. */}}
{{- define "vtl.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* ServiceAccount of the appliance processes. */}}
{{- define "vtl.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vtl.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* ServiceAccount of the GitOps source. */}}
{{- define "vtl.gitopsServiceAccountName" -}}
{{- if .Values.gitops.serviceAccount.create }}
{{- default (printf "%s-gitops" (include "vtl.fullname" .)) .Values.gitops.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.gitops.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Names of the etcd StatefulSet and its headless (peer) Service. */}}
{{- define "vtl.etcdName" -}}
{{- printf "%s-etcd" (include "vtl.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "vtl.etcdPeerServiceName" -}}
{{- printf "%s-etcd-headless" (include "vtl.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Refuses an etcd member count that cannot keep quorum sensibly. */}}
{{- define "vtl.etcdReplicas" -}}
{{- $n := int .Values.etcd.replicaCount }}
{{- if not (has $n (list 1 3)) }}
{{- fail (printf "etcd.replicaCount must be 1 or 3, got %d" $n) }}
{{- end }}
{{- $n }}
{{- end }}

{{/* The address of etcd member $i: `<statefulset>-<i>.<peer service>.<namespace>.svc.<domain>`. */}}
{{- define "vtl.etcdMemberHost" -}}
{{- $root := index . 0 }}
{{- printf "%s-%d.%s.%s.svc.%s" (include "vtl.etcdName" $root) (index . 1) (include "vtl.etcdPeerServiceName" $root) $root.Release.Namespace $root.Values.clusterDomain }}
{{- end }}

{{/* VTL_ETCD_ENDPOINTS: every member of the chart's etcd, or the external cluster. */}}
{{- define "vtl.etcdEndpoints" -}}
{{- if .Values.etcd.enabled }}
{{- $urls := list }}
{{- range $i := until (int (include "vtl.etcdReplicas" .)) }}
{{- $urls = append $urls (printf "https://%s:%d" (include "vtl.etcdMemberHost" (list $ $i)) (int $.Values.etcd.clientPort)) }}
{{- end }}
{{- join "," $urls }}
{{- else if .Values.etcd.externalEndpoints }}
{{- join "," .Values.etcd.externalEndpoints }}
{{- else }}
{{- fail "etcd.enabled is false: set etcd.externalEndpoints to the client URLs of an etcd cluster" }}
{{- end }}
{{- end }}

{{/* `--initial-cluster` of the chart's etcd. */}}
{{- define "vtl.etcdInitialCluster" -}}
{{- $peers := list }}
{{- range $i := until (int (include "vtl.etcdReplicas" .)) }}
{{- $peers = append $peers (printf "%s-%d=https://%s:%d" (include "vtl.etcdName" $) $i (include "vtl.etcdMemberHost" (list $ $i)) (int $.Values.etcd.peerPort)) }}
{{- end }}
{{- join "," $peers }}
{{- end }}

{{/* Secret holding the apiserver's TLS pair; empty when each pod makes its own. */}}
{{- define "vtl.apiserverTlsSecretName" -}}
{{- if .Values.apiserver.tls.existingSecret }}
{{- .Values.apiserver.tls.existingSecret }}
{{- else if .Values.apiserver.tls.autoGenerate }}
{{- printf "%s-apiserver-tls" (include "vtl.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Environment every appliance process reads: etcd and this pod's node name. */}}
{{- define "vtl.commonEnv" -}}
- name: VTL_ETCD_ENDPOINTS
  value: {{ include "vtl.etcdEndpoints" . | quote }}
- name: VTL_NODE
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
{{- end }}

{{/* Secret with the etcd CA and certificates (ca.crt, <process>.crt/.key); empty: an external etcd without TLS. */}}
{{- define "vtl.etcdTlsSecretName" -}}
{{- if .Values.etcd.tls.existingSecret }}
{{- .Values.etcd.tls.existingSecret }}
{{- else if .Values.etcd.enabled }}
{{- printf "%s-etcd-tls" (include "vtl.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Secret holding the first admin's password (key password). */}}
{{- define "vtl.adminSecretName" -}}
{{- if .Values.admin.existingSecret }}
{{- .Values.admin.existingSecret }}
{{- else }}
{{- printf "%s-admin" (include "vtl.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The etcd image: the vtl image (Debian's etcd) unless etcd.image.repository names another. */}}
{{- define "vtl.etcdImage" -}}
{{- if .Values.etcd.image.repository }}
{{- printf "%s:%s" .Values.etcd.image.repository (required "etcd.image.tag is needed with etcd.image.repository" .Values.etcd.image.tag) }}
{{- else }}
{{- include "vtl.image" . }}
{{- end }}
{{- end }}

{{/* Secret holding the sealing key file (key sealing.key). */}}
{{- define "vtl.sealingSecretName" -}}
{{- if .Values.sealing.existingSecret }}
{{- .Values.sealing.existingSecret }}
{{- else }}
{{- printf "%s-sealing" (include "vtl.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
How one process reaches the store: (dict "root" $ "id" "apiserver" "sealing" true). Its own
etcd client certificate, and the sealing key file for the processes that read or write secrets.
*/}}
{{- define "vtl.storeEnv" -}}
{{- if include "vtl.etcdTlsSecretName" .root }}
- name: VTL_ETCD_CA_FILE
  value: /etc/vtl/etcd/ca.crt
- name: VTL_ETCD_CERT_FILE
  value: /etc/vtl/etcd/{{ .id }}.crt
- name: VTL_ETCD_KEY_FILE
  value: /etc/vtl/etcd/{{ .id }}.key
{{- end }}
{{- if .sealing }}
- name: VTL_SEALING_KEY_FILE
  value: /etc/vtl/sealing/sealing.key
{{- end }}
{{- end }}

{{- define "vtl.storeVolumeMounts" -}}
{{- if include "vtl.etcdTlsSecretName" .root }}
- name: etcd-tls
  mountPath: /etc/vtl/etcd
  readOnly: true
{{- end }}
{{- if .sealing }}
- name: sealing
  mountPath: /etc/vtl/sealing
  readOnly: true
{{- end }}
{{- end }}

{{- define "vtl.storeVolumes" -}}
{{- with include "vtl.etcdTlsSecretName" .root }}
- name: etcd-tls
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    items:
      - key: ca.crt
        path: ca.crt
      - key: {{ $.id }}.crt
        path: {{ $.id }}.crt
      - key: {{ $.id }}.key
        path: {{ $.id }}.key
{{- end }}
{{- if .sealing }}
- name: sealing
  secret:
    secretName: {{ include "vtl.sealingSecretName" .root }}
    defaultMode: 0440
    items:
      - key: sealing.key
        path: sealing.key
{{- end }}
{{- end }}

{{/*
Spreads a replicated component's pods over zones (when the nodes carry the zone label; a
cluster without zones is one zone and nothing is skewed). Soft: a pod still starts when it
cannot be spread. `topologySpread.enabled: false` leaves it out.
*/}}
{{- define "vtl.topologySpread" -}}
{{- if .ctx.Values.topologySpread.enabled }}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: {{ .ctx.Values.topologySpread.topologyKey }}
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "vtl.selectorLabels" .ctx | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}
