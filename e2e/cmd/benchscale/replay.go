package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/requestlog"
)

// A replay sends again, from one client with the services stopped, the
// requests the source-controller and the sync-controller sent to the API
// server in the create phase, as their clients recorded them
// (--record-api-requests), into a fresh namespace: the API server's share
// of the create phase with no controller waiting on anything. Nothing is
// copied by hand, so a replay sends what the services send today.
type replay struct {
	name      string
	namespace string
	// keep selects the recorded requests the replay sends.
	keep func(recordedRequest) bool
	// createsApplications creates each Application first, as the
	// benchmark does before the services' requests.
	createsApplications bool
}

var replays = []replay{
	{name: "the services' requests, replayed", namespace: "replay",
		keep: func(recordedRequest) bool { return true }, createsApplications: true},
	// The floor of a rollout that dry-runs every object: the applies the
	// sync-controller sent as an Application's service account, dry-runs
	// and real ones.
	{name: "only their dry-runs and applies", namespace: "replay-objects",
		keep: func(r recordedRequest) bool { return r.User != "" && r.Method == http.MethodPatch }},
}

// recordFile is where service of shard records its requests.
func recordFile(dir, service, shard string) string {
	return filepath.Join(dir, "requests-"+service+shard+".jsonl")
}

// recordedServices are the services whose requests are replayed.
var recordedServices = []string{"source-controller", "sync-controller"}

// recordedRequest is one request a service sent.
type recordedRequest struct {
	requestlog.Entry
	service string
}

// record is what the services sent in the bench namespace during a phase.
type record struct {
	// apps are each Application's requests in the order they were sent.
	apps map[string][]recordedRequest
	// shared are the requests no one Application's name is in: its
	// Repositories' status, lists.
	shared []recordedRequest
}

// appInRequest finds the bench's Application names (appName) in a path,
// query or body: the Application's own, its Revisions' and Secrets'
// (<app>-<digest>), its objects' and its Events' (<app>.<suffix>). No word
// boundary: in a Protobuf body a name follows its length, which may be a
// letter.
var appInRequest = regexp.MustCompile(`app-[0-9]{4,}`)

// readRecord reads what every shard's services recorded in the bench
// namespace from from until to.
func readRecord(dir string, from, to time.Time) (*record, error) {
	var all []recordedRequest
	for _, shard := range shardNames() {
		for _, service := range recordedServices {
			entries, err := requestlog.ReadFile(recordFile(dir, service, shard), func(e requestlog.Entry) bool {
				return !e.Time.Before(from) && e.Time.Before(to) && strings.Contains(e.Path, "/namespaces/"+benchNamespace+"/")
			})
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				all = append(all, recordedRequest{Entry: e, service: service})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	rec := &record{apps: map[string][]recordedRequest{}}
	for _, r := range all {
		app := appInRequest.FindString(r.Path)
		if query, err := url.QueryUnescape(r.Query); app == "" && err == nil {
			app = appInRequest.FindString(query)
		}
		if app == "" {
			app = string(appInRequest.Find(r.Payload()))
		}
		if app == "" {
			rec.shared = append(rec.shared, r)
			continue
		}
		rec.apps[app] = append(rec.apps[app], r)
	}
	return rec, nil
}

// perApplication counts the record's requests by service, verb and
// resource, divided by n.
func (rec *record) perApplication(n int) map[string]float64 {
	out := map[string]float64{}
	for _, reqs := range rec.apps {
		for _, r := range reqs {
			out[r.service+" "+describe(r.Entry)] += 1 / float64(n)
		}
	}
	return out
}

// describe names a request by the API server's verb and resource, marking
// dry-runs and requests sent as an impersonated service account.
func describe(e requestlog.Entry) string {
	resource, name := resourceOf(e.Path)
	verb := strings.ToLower(e.Method)
	switch e.Method {
	case http.MethodGet:
		verb = "get"
		if name == "" {
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		if strings.HasPrefix(e.ContentType, "application/apply-patch") {
			verb = "apply"
		}
	}
	s := verb + " " + resource
	if q, err := url.ParseQuery(e.Query); err == nil && q.Get("dryRun") != "" {
		s += " (dry-run)"
	}
	if e.User != "" {
		s += " as the Application's account"
	}
	return s
}

// resourceOf is the resource (with its subresource) and object name of a
// namespaced path: /api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]], or
// the same under /apis/<group>/<version>.
func resourceOf(path string) (resource, name string) {
	_, rest, ok := strings.Cut(path, "/namespaces/")
	if !ok {
		return path, ""
	}
	parts := strings.Split(rest, "/")[1:]
	switch len(parts) {
	case 0:
		return "namespaces", ""
	case 1:
		return parts[0], ""
	case 2:
		return parts[0], parts[1]
	default:
		return parts[0] + "/" + strings.Join(parts[2:], "/"), parts[1]
	}
}

// replayResult is what one replay took: until its last request, until
// kube-controller-manager observed its Deployments, and kube-apiserver's
// CPU meanwhile.
type replayResult struct {
	replay
	took, observed, serverCPU time.Duration
	requests                  int
	// otherwise counts the requests answered with another status than
	// recorded, by request and both statuses.
	otherwise map[string]float64
}

// run replays rec's requests of n Applications with workers in parallel,
// each worker one Application's requests at a time in their recorded
// order.
func (rp replay) run(ctx context.Context, cfg *rest.Config, rec *record, n, workers int) (replayResult, error) {
	res := replayResult{replay: rp, otherwise: map[string]float64{}}
	c, err := bareClient(cfg)
	if err != nil {
		return res, err
	}
	httpClient, err := rest.HTTPClientFor(unlimited(cfg))
	if err != nil {
		return res, err
	}
	s := &sender{namespace: rp.namespace, host: strings.TrimSuffix(cfg.Host, "/"), http: httpClient,
		uids: map[string]string{}, otherwise: res.otherwise}
	if rp.createsApplications {
		if err := s.copyRepositories(ctx, c); err != nil {
			return res, err
		}
	}
	groups := [][]recordedRequest{}
	var shared []recordedRequest
	for _, r := range rec.shared {
		if rp.keep(r) {
			shared = append(shared, r)
		}
	}
	if len(shared) > 0 {
		groups = append(groups, shared)
	}
	names := make([]string, 0, n)
	for i := range n {
		names = append(names, appName(i))
		var kept []recordedRequest
		for _, r := range rec.apps[appName(i)] {
			if rp.keep(r) {
				kept = append(kept, r)
			}
		}
		groups = append(groups, kept)
	}
	sharedGroups := len(groups) - n

	before, err := controlPlaneCPU()
	if err != nil {
		return res, err
	}
	start := time.Now()
	counts := make([]int, len(groups))
	err = parallel(len(groups), workers, func(g int) error {
		if rp.createsApplications && g >= sharedGroups {
			i := g - sharedGroups
			app := application(i, rp.namespace)
			if err := c.Create(ctx, app); err != nil {
				return fmt.Errorf("creating Application %s/%s: %w", rp.namespace, names[i], err)
			}
			counts[g]++
			s.learn("Application", app.Name, string(app.UID))
		}
		for _, r := range groups[g] {
			if err := s.send(ctx, r); err != nil {
				return err
			}
			counts[g]++
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("%s: %w", rp.name, err)
	}
	res.took = time.Since(start)
	for _, k := range counts {
		res.requests += k
	}
	observed, err := deploymentsObserved(ctx, c, rp.namespace, n)
	if err != nil {
		return res, fmt.Errorf("%s: %w; answered otherwise than recorded: %s", rp.name, err, top(res.otherwise, 5))
	}
	res.observed = res.took + observed
	after, err := controlPlaneCPU()
	if err != nil {
		return res, err
	}
	res.serverCPU = after[apiServer] - before[apiServer]
	return res, nil
}

// sender sends recorded requests into namespace instead of the bench's.
type sender struct {
	namespace string
	host      string
	http      *http.Client

	mu sync.Mutex
	// uids are the UIDs of the objects the replay created, by kind and
	// name, for the owner references and Events that name them.
	uids      map[string]string
	otherwise map[string]float64
}

// copyRepositories creates the bench namespace's Repositories in the
// replay's, whose status the services wrote.
func (s *sender) copyRepositories(ctx context.Context, c client.Client) error {
	var list syncv1.RepositoryList
	if err := c.List(ctx, &list, client.InNamespace(benchNamespace)); err != nil {
		return err
	}
	for _, r := range list.Items {
		cp := &syncv1.Repository{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: r.Name, Labels: r.Labels},
			Spec:       r.Spec,
		}
		if err := c.Create(ctx, cp); err != nil {
			return fmt.Errorf("copying Repository %s/%s: %w", benchNamespace, r.Name, err)
		}
		s.learn("Repository", cp.Name, string(cp.UID))
	}
	return nil
}

func (s *sender) learn(kind, name, uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uids[kind+"/"+name] = uid
}

func (s *sender) uid(kind, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uids[kind+"/"+name]
}

// send sends r into the replay's namespace, as the same service account
// name there if r was impersonated, and notes an answer other than the
// recorded one.
func (s *sender) send(ctx context.Context, r recordedRequest) error {
	path := strings.Replace(r.Path, "/namespaces/"+benchNamespace+"/", "/namespaces/"+s.namespace+"/", 1)
	query, err := url.ParseQuery(r.Query)
	if err != nil {
		return fmt.Errorf("recorded query %q: %w", r.Query, err)
	}
	// A recorded resourceVersion names a state of the bench namespace:
	// the replay reads and writes the latest.
	if rv := query.Get("resourceVersion"); rv != "" && rv != "0" {
		query.Del("resourceVersion")
		query.Del("resourceVersionMatch")
	}
	body, err := s.rewrite(r.Payload(), r.ContentType)
	if err != nil {
		return fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	u := s.host + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var reader io.Reader
	if len(body) > 0 {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, reader)
	if err != nil {
		return err
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	accept := r.Accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if r.User != "" {
		req.Header.Set("Impersonate-User", strings.Replace(r.User,
			"system:serviceaccount:"+benchNamespace+":", "system:serviceaccount:"+s.namespace+":", 1))
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", r.Method, u, err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%s %s: %w", r.Method, u, err)
	}
	if resp.StatusCode != r.Status {
		s.mu.Lock()
		s.otherwise[fmt.Sprintf("%s: recorded %d, replayed %d", describe(r.Entry), r.Status, resp.StatusCode)]++
		s.mu.Unlock()
	}
	if resp.StatusCode < 300 && r.Method != http.MethodGet && r.Method != http.MethodDelete && query.Get("dryRun") == "" {
		if obj, ok := decode(answer, resp.Header.Get("Content-Type")).(map[string]any); ok {
			kind, _ := obj["kind"].(string)
			meta, _ := obj["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			if uid, _ := meta["uid"].(string); kind != "" && name != "" && uid != "" {
				s.learn(kind, name, uid)
			}
		}
	}
	return nil
}

// rewrite moves a recorded body into the replay's namespace: namespaces
// and "<namespace>/<name>" references, UIDs of the objects the replay
// created in their stead, no resourceVersion preconditions. A body it
// cannot read (none has been seen) is sent as recorded.
func (s *sender) rewrite(body []byte, contentType string) ([]byte, error) {
	if len(body) == 0 {
		return nil, nil
	}
	v := decode(body, contentType)
	if v == nil {
		return body, nil
	}
	v = s.rewriteValue(v, "", "")
	if isProtobuf(contentType) {
		return encodeProtobuf(v)
	}
	return json.Marshal(v)
}

// rewriteValue rewrites v, found under key of an object of kind.
func (s *sender) rewriteValue(v any, key, kind string) any {
	switch t := v.(type) {
	case string:
		if rest, ok := strings.CutPrefix(t, benchNamespace+"/"); ok {
			return s.namespace + "/" + rest
		}
		if key == "namespace" && t == benchNamespace {
			return s.namespace
		}
		return t
	case []any:
		for i := range t {
			t[i] = s.rewriteValue(t[i], "", "")
		}
		return t
	case map[string]any:
		own, _ := t["kind"].(string)
		if own == "" && key == "metadata" {
			own = kind
		}
		delete(t, "resourceVersion")
		if _, ok := t["uid"]; ok {
			name, _ := t["name"].(string)
			if uid := s.uid(own, name); uid != "" {
				t["uid"] = uid
			} else {
				delete(t, "uid")
			}
		}
		for k, child := range t {
			if k != "uid" {
				t[k] = s.rewriteValue(child, k, own)
			}
		}
		return t
	}
	return v
}

// scheme and protobufSerializer read and write the Protobuf bodies of
// client-go's clientsets.
var (
	scheme             = manager.Scheme()
	protobufSerializer = protobuf.NewSerializer(scheme, scheme)
)

func isProtobuf(contentType string) bool {
	return strings.Contains(contentType, "protobuf")
}

// decode reads a JSON, YAML or Protobuf body as JSON values; nil if it
// cannot.
func decode(body []byte, contentType string) any {
	if isProtobuf(contentType) {
		obj, _, err := protobufSerializer.Decode(body, nil, nil)
		if err != nil {
			return nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Empty() {
			if gvks, _, err := scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
				gvk = gvks[0]
			}
		}
		m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
		return m
	}
	data := body
	if strings.Contains(contentType, "yaml") {
		var err error
		if data, err = yaml.YAMLToJSON(body); err != nil {
			return nil
		}
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil
	}
	return v
}

// encodeProtobuf writes v, a typed object's JSON values, as Protobuf.
func encodeProtobuf(v any) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a Protobuf body of %T", v)
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	obj, err := scheme.New(gv.WithKind(kind))
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gv.WithKind(kind))
	var buf bytes.Buffer
	if err := protobufSerializer.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
