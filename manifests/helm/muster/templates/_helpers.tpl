{{/*
A file of the kustomize base (files/, links to manifests/), with the release
namespace in place of muster-system. Call: include "muster.file" (list "NAME" $)
*/}}
{{- define "muster.file" -}}
{{- $ctx := index . 1 -}}
{{- $ctx.Files.Get (printf "files/%s" (index . 0)) | replace "muster-system" $ctx.Release.Namespace -}}
{{- end -}}
