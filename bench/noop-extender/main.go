// noop-extender is the ceiling for any kube-scheduler extender in
// bench/throughput.sh: it speaks the same verbs muster does and decides
// nothing. Standard library only.
//
//	/filter      echoes every NodeName (nodeCacheCapable) or every node
//	/prioritize  a score of 0 for every node
//	/bind        POSTs pods/binding to the apiserver, like DefaultBinder
//	/preempt     no victims (a veto, as muster answers)
//	/healthz     ok
//	/metrics     request counters
//
// Usage:
//
//	noop-extender --listen 127.0.0.1:PORT --kubeconfig FILE
//
// The kubeconfig must name the server, a CA file (certificate-authority)
// or insecure-skip-tls-verify, and a bearer token: what
// tests/e2e/cluster.sh writes. Nothing else is parsed.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

type kubeconfig struct {
	server, caFile, token string
	insecure              bool
}

// readKubeconfig takes the first server, certificate-authority,
// insecure-skip-tls-verify and token lines of a simple kubeconfig.
func readKubeconfig(path string) (kubeconfig, error) {
	var kc kubeconfig
	f, err := os.Open(path)
	if err != nil {
		return kc, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimPrefix(strings.TrimSpace(k), "- ") {
		case "server":
			if kc.server == "" {
				kc.server = v
			}
		case "certificate-authority":
			if kc.caFile == "" {
				kc.caFile = v
			}
		case "insecure-skip-tls-verify":
			kc.insecure = v == "true"
		case "token":
			if kc.token == "" {
				kc.token = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return kc, err
	}
	if kc.server == "" || kc.token == "" {
		return kc, fmt.Errorf("%s: no server or token", path)
	}
	return kc, nil
}

// The wire types (k8s.io/kube-scheduler/extender/v1), only the fields used.
type extenderArgs struct {
	Nodes *struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	} `json:"Nodes,omitempty"`
	NodeNames *[]string `json:"NodeNames,omitempty"`
}

type filterResult struct {
	NodeNames                  *[]string         `json:"NodeNames"`
	FailedNodes                map[string]string `json:"FailedNodes"`
	FailedAndUnresolvableNodes map[string]string `json:"FailedAndUnresolvableNodes"`
	Error                      string            `json:"Error"`
}

type hostPriority struct {
	Host  string `json:"Host"`
	Score int64  `json:"Score"`
}

type bindingArgs struct {
	PodName      string `json:"PodName"`
	PodNamespace string `json:"PodNamespace"`
	PodUID       string `json:"PodUID"`
	Node         string `json:"Node"`
}

type bindingResult struct {
	Error string `json:"Error"`
}

type server struct {
	kc                                   kubeconfig
	client                               *http.Client
	filters, prioritizes, binds, bindErr atomic.Uint64
}

func names(a *extenderArgs) []string {
	if a.NodeNames != nil {
		return *a.NodeNames
	}
	var out []string
	if a.Nodes != nil {
		for _, n := range a.Nodes.Items {
			out = append(out, n.Metadata.Name)
		}
	}
	return out
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("write reply: %v", err)
	}
}

func (s *server) filter(w http.ResponseWriter, r *http.Request) {
	var a extenderArgs
	s.filters.Add(1)
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		reply(w, filterResult{Error: "bad request: " + err.Error()})
		return
	}
	n := names(&a)
	reply(w, filterResult{NodeNames: &n, FailedNodes: map[string]string{},
		FailedAndUnresolvableNodes: map[string]string{}})
}

func (s *server) prioritize(w http.ResponseWriter, r *http.Request) {
	var a extenderArgs
	s.prioritizes.Add(1)
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		reply(w, []hostPriority{})
		return
	}
	n := names(&a)
	out := make([]hostPriority, len(n))
	for i, h := range n {
		out[i] = hostPriority{Host: h}
	}
	reply(w, out)
}

func (s *server) bind(w http.ResponseWriter, r *http.Request) {
	var a bindingArgs
	s.binds.Add(1)
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		s.bindErr.Add(1)
		reply(w, bindingResult{Error: "bad request: " + err.Error()})
		return
	}
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]string{"name": a.PodName, "namespace": a.PodNamespace, "uid": a.PodUID},
		"target":   map[string]string{"apiVersion": "v1", "kind": "Node", "name": a.Node},
	})
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/binding", s.kc.server, a.PodNamespace, a.PodName)
	req, err := http.NewRequestWithContext(r.Context(), "POST", url, bytes.NewReader(body))
	if err != nil {
		s.bindErr.Add(1)
		reply(w, bindingResult{Error: err.Error()})
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.kc.token)
	resp, err := s.client.Do(req)
	if err != nil {
		s.bindErr.Add(1)
		reply(w, bindingResult{Error: err.Error()})
		return
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.bindErr.Add(1)
		reply(w, bindingResult{Error: fmt.Sprintf("binding %s/%s: HTTP %d: %s",
			a.PodNamespace, a.PodName, resp.StatusCode, bytes.TrimSpace(msg))})
		return
	}
	reply(w, bindingResult{})
}

func (s *server) preempt(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	reply(w, map[string]any{"NodeNameToMetaVictims": map[string]any{}})
}

func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "noop_extender_filter_requests_total %d\n", s.filters.Load())
	fmt.Fprintf(w, "noop_extender_prioritize_requests_total %d\n", s.prioritizes.Load())
	fmt.Fprintf(w, "noop_extender_bind_requests_total %d\n", s.binds.Load())
	fmt.Fprintf(w, "noop_extender_bind_errors_total %d\n", s.bindErr.Load())
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8889", "HOST:PORT to serve on")
	kcPath := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig for the binds")
	flag.Parse()
	kc, err := readKubeconfig(*kcPath)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	tc := &tls.Config{InsecureSkipVerify: kc.insecure}
	if kc.caFile != "" && !kc.insecure {
		pem, err := os.ReadFile(kc.caFile)
		if err != nil {
			log.Fatalf("CA: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			log.Fatalf("CA %s: no certificate", kc.caFile)
		}
		tc.RootCAs = pool
	}
	s := &server{kc: kc, client: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     tc,
			ForceAttemptHTTP2:   true, // one multiplexed connection, as client-go uses
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		},
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/filter", s.filter)
	mux.HandleFunc("/prioritize", s.prioritize)
	mux.HandleFunc("/bind", s.bind)
	mux.HandleFunc("/preempt", s.preempt)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/metrics", s.metrics)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	log.Printf("noop extender on %s, binding through %s", ln.Addr(), kc.server)
	log.Fatal((&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln))
}
