// Package v1alpha1 holds our Go types for Volcano's flow.volcano.sh/v1alpha1
// API group: the JobTemplate (a Volcano Job's spec kept under a name, run
// by nobody) and the JobFlow (steps naming JobTemplates, each step waiting
// for the steps it depends on). Volcano's jobflow controller makes one
// Volcano Job per step, named <flow>-<template>, once every step it depends
// on has a Completed job; its jobtemplate controller records in each
// template's status the jobs made from it. On the wire they are Volcano's:
// field names, JSON tags and validation follow the upstream CRDs.
//
// kubectl-vc has no jobflow or jobtemplate controller, and 'kubectl vc
// install' does not install these CRDs: Volcano installs them with its
// controllers.
//
// +k8s:deepcopy-gen=package
// +groupName=flow.volcano.sh
// +kubebuilder:object:generate=true
package v1alpha1
