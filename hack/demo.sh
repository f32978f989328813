#!/usr/bin/env bash
# make demo: the quick start told as a story on a real local cluster.
# It starts the local cluster (with a real node where this machine can run
# one: root and 'make node-deps'), builds the image with 'make image', loads
# it into the node and deploys serve as a user would, with
# 'kubectl vc install --serve --image'; without a node it runs
# 'kubectl vc serve' as a local process instead. Then it walks a queue
# hierarchy through close and open. Everything it starts is stopped on
# exit, whatever happens.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/bin:$PATH"
work=$(mktemp -d)
serve_pid=""
cleanup() {
  if [[ -n "$serve_pid" ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  go run ./hack/cluster down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

bold() { printf '\n\033[1m%s\033[0m\n' "$*"; }
say() { printf '\033[2m# %s\033[0m\n' "$*"; }
run() { printf '\033[1m$ %s\033[0m\n' "$*"; "$@"; }

bold "1. A local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, and a node, built from source)"
go run ./hack/cluster down >/dev/null 2>&1 || true
go run ./hack/cluster up | grep -v '^export'
export KUBECONFIG="$root/.cluster/kubeconfig"
run kubectl vc version
node=false
[[ "$(cat "$root/.cluster/level")" == node ]] && node=true

if $node; then
  run kubectl get nodes
  bold "2. The image of serve: built without Docker, loaded into the node"
  image=ghcr.io/kubectl-vc/kubectl-vc:demo
  make --no-print-directory image IMAGE="$image" IMAGE_TAR="$work/image.tar" | tail -1
  go run ./hack/cluster load "$work/image.tar"

  bold "3. Install the CRDs, the admission policies and serve (two replicas, leader election)"
  run kubectl vc install --crds --policies --serve --image "$image"
  run kubectl -n volcano-system rollout status deployment/kubectl-vc-serve --timeout=3m
  run kubectl -n volcano-system get pods -o wide
else
  bold "2. Install the CRDs and the queue lifecycle admission policies"
  run kubectl vc install

  bold "3. Run the controllers: kubectl vc serve (no node here, so as a local process)"
  # With leader election, as the quick start runs it: its Lease is how
  # 'kubectl vc doctor' sees that serve acts on Commands.
  kubectl create namespace volcano-system >/dev/null
  kubectl-vc serve --leader-elect --controllers=queue,podgroup,queueindex --metrics-bind-address=0 --health-probe-bind-address=0 >"$work/serve.log" 2>&1 &
  serve_pid=$!
  say "serve is running (pid $serve_pid)"
fi
say "serve creates the root and default queues"
for _ in $(seq 1 300); do
  kubectl vc queue get root -o name >/dev/null 2>&1 && break
  sleep 0.2
done

bold "4. A queue hierarchy: team-a with children dev and prod"
run kubectl vc queue create team-a --weight 4 --capability cpu=64,memory=256Gi
run kubectl vc queue create dev --parent team-a --weight 1
run kubectl vc queue create prod --parent team-a --weight 3

bold "5. Work arrives: pods for the volcano scheduler get PodGroups from serve"
for q in dev prod; do
  for i in 1 2; do
    kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $q-job-$i
  annotations:
    scheduling.volcano.sh/queue-name: $q
spec:
  schedulerName: volcano
  containers:
    - name: main
      image: busybox
      resources:
        requests: {cpu: "1", memory: 1Gi}
YAML
  done
done
say "no scheduler runs here, so we mark the groups Running as Volcano's scheduler would"
for _ in $(seq 1 100); do
  n=$(kubectl get podgroups -o name 2>/dev/null | wc -l)
  [[ "$n" -ge 4 ]] && break
  sleep 0.2
done
for pg in $(kubectl get podgroups -o name); do
  kubectl patch "$pg" --type merge -p '{"status":{"phase":"Running","running":1}}' >/dev/null
done
sleep 1
run kubectl vc queue list
run kubectl vc queue tree
first_pg=$(kubectl get podgroups -o jsonpath='{.items[0].metadata.name}')
run kubectl vc podgroup describe "$first_pg"

bold "6. Close team-a: it stays Closing while podgroups remain"
run kubectl vc queue close team-a
sleep 1
run kubectl vc queue tree
say "the jobs finish: their pods and podgroups go away"
kubectl vc queue close team-a --wait --timeout 60s 2>"$work/wait.log" &
wait_pid=$!
sleep 1
kubectl delete pods --all --wait=false >/dev/null
kubectl delete podgroups --all --wait=false >/dev/null
wait "$wait_pid"
sed 's/^/  /' "$work/wait.log"
run kubectl vc queue tree
say "dev and prod were closed by their parent (annotation volcano.sh/closed-by-parent)"

bold "7. Open team-a again: the children it closed reopen"
run kubectl vc queue open team-a --wait --timeout 60s
sleep 1
run kubectl vc queue tree

bold "8. The API server refuses to delete an Open queue; kubectl vc refuses a parent up front"
if kubectl vc queue delete dev; then
  echo "unexpected: an Open queue was deleted" >&2
  exit 1
fi
if kubectl vc queue delete team-a --close; then
  echo "unexpected: a queue with child queues was deleted" >&2
  exit 1
fi

if $node; then
  bold "9. The leader serve pod goes away: the other replica takes over"
  leader=$(kubectl -n volcano-system get lease kubectl-vc-serve -o jsonpath='{.spec.holderIdentity}')
  leader=${leader%%_*}
  run kubectl -n volcano-system delete pod "$leader"
  run kubectl vc queue close dev --wait --timeout 2m
  run kubectl -n volcano-system get lease kubectl-vc-serve -o jsonpath='{.spec.holderIdentity}{"\n"}'
fi

bold "Done. Tearing down serve and the cluster."
