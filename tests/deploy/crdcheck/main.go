// crdcheck validates the Prometheus Operator custom resources in rendered
// manifests (ServiceMonitor, PrometheusRule) against the operator's own Go
// types, strictly: an unknown field, a wrong type or a missing document kind
// is an error. kubernetes-validate has no schemas for custom resources.
//
//	crdcheck FILE...   (multi-document YAML; exit 1 on the first bad resource)
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func check(doc []byte) (string, error) {
	var h header
	if err := yaml.Unmarshal(doc, &h); err != nil {
		return "", err
	}
	if h.APIVersion != monitoringv1.SchemeGroupVersion.String() {
		return "", nil
	}
	name := h.Kind + "/" + h.Metadata.Name
	switch h.Kind {
	case monitoringv1.ServiceMonitorsKind:
		var sm monitoringv1.ServiceMonitor
		return name, yaml.UnmarshalStrict(doc, &sm)
	case monitoringv1.PrometheusRuleKind:
		var pr monitoringv1.PrometheusRule
		return name, yaml.UnmarshalStrict(doc, &pr)
	default:
		return name, fmt.Errorf("no Go type checked here for kind %s", h.Kind)
	}
}

func main() {
	checked := 0
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			if strings.TrimSpace(string(doc)) == "" {
				continue
			}
			name, err := check(doc)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %s: %v\n", path, name, err)
				os.Exit(1)
			}
			if name != "" {
				fmt.Printf("%s: %s: valid\n", path, name)
				checked++
			}
		}
	}
	fmt.Printf("crdcheck: %d custom resources valid\n", checked)
}
