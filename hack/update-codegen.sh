#!/usr/bin/env bash
# Regenerates everything derived from pkg/apis: deepcopy functions and CRD
# manifests (controller-gen), and the clientset, listers, informers and apply
# configurations (k8s.io/code-generator). The generators are pinned in
# hack/tools/go.mod and built from the Go module proxy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tools="$root/bin/tools"
(cd hack/tools && GOBIN="$tools" go install tool)

mod=github.com/kubectl-vc/kubectl-vc
header=hack/boilerplate.go.txt
groups=(scheduling/v1beta1 bus/v1alpha1 batch/v1alpha1 flow/v1alpha1 slinky/v1beta1 admission/v1alpha1 topology/v1alpha1)
# Only the groups that exist (a group is added by creating its package).
inputs=()
present=()
for g in "${groups[@]}"; do
  if [[ -d pkg/apis/$g ]]; then
    inputs+=("$mod/pkg/apis/$g")
    present+=("$g")
  fi
done

"$tools/controller-gen" object:headerFile="$header" paths=./pkg/apis/...
# generateEmbeddedObjectMeta: the pod templates of a Volcano Job carry their
# metadata's schema (labels, annotations, ...), as in Volcano's own CRD.
crd_out=$(mktemp -d)
trap 'rm -rf "$crd_out"' EXIT
"$tools/controller-gen" crd:generateEmbeddedObjectMeta=true paths=./pkg/apis/... output:crd:artifacts:config="$crd_out"
# Slinky operator's kinds that we only read (Controller, RestApi) must not
# be installed by 'kubectl vc install', which installs all of pkg/crds/bases:
# their CRDs go to pkg/crds/slinkyoperator, for tests only.
slinky_operator=(slinky.slurm.net_controllers.yaml slinky.slurm.net_restapis.yaml)
# Volcano's JobFlow and JobTemplate come with Volcano's jobflow and
# jobtemplate controllers, which serve does not have: their CRDs go to
# pkg/crds/volcanoflow, out of install's (and doctor's) set.
volcano_flow=(flow.volcano.sh_jobflows.yaml flow.volcano.sh_jobtemplates.yaml)
rm -f pkg/crds/bases/*.yaml pkg/crds/slinkyoperator/*.yaml pkg/crds/volcanoflow/*.yaml
mkdir -p pkg/crds/slinkyoperator pkg/crds/volcanoflow
for f in "${slinky_operator[@]}"; do
  mv "$crd_out/$f" pkg/crds/slinkyoperator/
done
for f in "${volcano_flow[@]}"; do
  mv "$crd_out/$f" pkg/crds/volcanoflow/
done
mv "$crd_out"/*.yaml pkg/crds/bases/

rm -rf pkg/client
"$tools/applyconfiguration-gen" --go-header-file "$header" \
  --output-dir pkg/client/applyconfiguration --output-pkg "$mod/pkg/client/applyconfiguration" \
  "${inputs[@]}"
client_inputs=$(IFS=,; echo "${present[*]}")
"$tools/client-gen" --go-header-file "$header" --clientset-name versioned \
  --input-base "$mod/pkg/apis" --input "$client_inputs" \
  --apply-configuration-package "$mod/pkg/client/applyconfiguration" \
  --output-dir pkg/client/clientset --output-pkg "$mod/pkg/client/clientset"
"$tools/lister-gen" --go-header-file "$header" \
  --output-dir pkg/client/listers --output-pkg "$mod/pkg/client/listers" "${inputs[@]}"
"$tools/informer-gen" --go-header-file "$header" \
  --versioned-clientset-package "$mod/pkg/client/clientset/versioned" \
  --listers-package "$mod/pkg/client/listers" \
  --output-dir pkg/client/informers --output-pkg "$mod/pkg/client/informers" "${inputs[@]}"
gofmt -w pkg/client pkg/apis
