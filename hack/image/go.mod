// Module image builds the container image of kubectl-vc ('make image') with
// go-containerregistry. It is kept apart from the main module so that the
// binary never depends on go-containerregistry.
module github.com/kubectl-vc/kubectl-vc/hack/image

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
