package retry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/tractdag/tract/internal/jsonerr"
)

// The "$schema" values of the drafts the library validates, as it spells
// them. A schema without "$schema" is draft 2020-12.
const (
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
	draft7    = "http://json-schema.org/draft-07/schema#"
)

// draftError is a "$schema" that names a draft (or a meta-schema) the
// library cannot validate with. Validating with another draft's rules
// would accept or reject the wrong answers, so such a schema is refused.
type draftError struct {
	uri    string // the document that declares it
	schema string // its "$schema"
	name   string // the draft's name, "" when it names none
}

func (e *draftError) Error() string {
	where := "the schema"
	if e.uri != "" {
		where = "the schema it refers to at " + e.uri
	}
	what := "names no JSON Schema draft this validator knows (a custom meta-schema?)"
	if e.name != "" {
		what = "is " + e.name + ", which this validator does not support"
	}
	return fmt.Sprintf(`"$schema" of %s (%q) %s: use draft 2020-12 (the default when "$schema" is absent) or draft-07`,
		where, e.schema, what)
}

// schemaDraft returns the library's spelling of the draft a "$schema"
// value names: draft 2020-12 or draft-07, with or without the "#" and over
// http or https.
func schemaDraft(schema string) (string, error) {
	if schema == "" {
		return draft2020, nil
	}
	u := strings.TrimSuffix(schema, "#")
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = rest
	} else {
		u = strings.TrimPrefix(u, "https://")
	}
	switch u {
	case "json-schema.org/draft/2020-12/schema":
		return draft2020, nil
	case "json-schema.org/draft-07/schema":
		return draft7, nil
	case "json-schema.org/draft/2019-09/schema":
		return "", &draftError{schema: schema, name: "draft 2019-09"}
	case "json-schema.org/draft-06/schema", "json-schema.org/draft-04/schema", "json-schema.org/draft-03/schema":
		return "", &draftError{schema: schema, name: strings.TrimSuffix(strings.TrimPrefix(u, "json-schema.org/"), "/schema")}
	case "json-schema.org/schema":
		return "", &draftError{schema: schema, name: "the unversioned latest draft"}
	}
	return "", &draftError{schema: schema}
}

// draftName names draft2020 or draft7 for people.
func draftName(draft string) string {
	if draft == draft7 {
		return "draft-07"
	}
	return "draft 2020-12"
}

// schemaJSONError is a schema file that is not JSON.
type schemaJSONError struct{ Err error }

func (e *schemaJSONError) Error() string { return "not JSON: " + e.Err.Error() }
func (e *schemaJSONError) Unwrap() error { return e.Err }

// schemaRefError is a "$ref" the validator will not follow: to anything
// but a local file (validation never uses the network), or to a file it
// cannot read or use.
type schemaRefError struct {
	Reason string
	Err    error
}

func (e *schemaRefError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}
func (e *schemaRefError) Unwrap() error { return e.Err }

// schemaSet is a schema file and the local files it refers to, as JSON
// values for explaining failures; the library compiles them too. Apart
// from its compilations cache it is read-only once loadSchema returns, so
// validations may share it.
type schemaSet struct {
	root string                // the URI of the schema file
	docs map[string]*schemaDoc // by URI: the file and the files it refers to
	// resources maps the absolute URI (no fragment) of each document and
	// of each subschema with an "$id" to where it is.
	resources map[string]schemaLoc
	// anchors maps "URI#name" of each "$anchor" and "$dynamicAnchor"
	// (draft-07: "$id": "#name") to where it is.
	anchors map[string]schemaLoc
	// patterns holds the compiled keys of every "patternProperties".
	patterns map[string]*regexp.Regexp
	// remote maps a URL that is not a file's to a local file, for tests
	// (the JSON Schema Test Suite's remotes); nil in use: no URL is read.
	remote func(*url.URL) (path string, ok bool)

	// mu guards nodes and leaves: the library's compilations of parts of
	// the schema that explanations make, kept for the validator's later
	// explanations (they depend on the schema alone).
	mu     sync.Mutex
	nodes  map[string]*jsonschema.Resolved // by subschema URI; nil when it did not compile
	leaves map[string]*jsonschema.Resolved // by keyword and value; nil when it did not compile
}

// compiled returns cache[key] (cache is s.nodes or s.leaves), compiling it
// with compile the first time. Two explanations that miss at once both
// compile, to the same result.
func (s *schemaSet) compiled(cache map[string]*jsonschema.Resolved, key string, compile func() *jsonschema.Resolved) *jsonschema.Resolved {
	s.mu.Lock()
	rs, seen := cache[key]
	s.mu.Unlock()
	if !seen {
		rs = compile()
		s.mu.Lock()
		cache[key] = rs
		s.mu.Unlock()
	}
	return rs
}

// schemaDoc is one schema document.
type schemaDoc struct {
	uri   string
	data  []byte
	value any    // data decoded with json.Number; never modified
	draft string // draft2020 or draft7
	// lib is data decoded for the library by schema, once: the
	// validator's compilation and the explanations' share it, and the
	// library modifies no schema it compiles.
	lib *jsonschema.Schema
}

// schemaLoc is a subschema: a document and a JSON pointer in it.
type schemaLoc struct {
	doc string
	ptr []string
}

func (l schemaLoc) uri() string {
	u, err := url.Parse(l.doc)
	if err != nil {
		return l.doc + "#" + jsonPointer(l.ptr)
	}
	u.Fragment = jsonPointer(l.ptr)
	u.RawFragment = ""
	return u.String()
}

// loadSchema reads the schema in data (the file at abs) and the local
// files it refers to, and compiles it with the library. remote is
// schemaSet.remote.
func loadSchema(abs string, data []byte, remote func(*url.URL) (string, bool)) (set *schemaSet, resolved *jsonschema.Resolved, err error) {
	return loadSchemaAt(fileURI(abs), data, remote)
}

// loadSchemaAt is loadSchema for the document data whose URI is root.
func loadSchemaAt(root string, data []byte, remote func(*url.URL) (string, bool)) (set *schemaSet, resolved *jsonschema.Resolved, err error) {
	defer func() {
		if p := recover(); p != nil {
			set, resolved, err = nil, nil, &schemaPanicError{p}
		}
	}()
	set = &schemaSet{
		root:      root,
		docs:      map[string]*schemaDoc{},
		resources: map[string]schemaLoc{},
		anchors:   map[string]schemaLoc{},
		patterns:  map[string]*regexp.Regexp{},
		remote:    remote,
		nodes:     map[string]*jsonschema.Resolved{},
		leaves:    map[string]*jsonschema.Resolved{},
	}
	doc, err := set.add(set.root, data, draft2020)
	if err != nil {
		return nil, nil, err
	}
	sch, err := doc.schema()
	if err != nil {
		return nil, nil, err
	}
	resolved, err = sch.Resolve(&jsonschema.ResolveOptions{BaseURI: set.root, Loader: set.load})
	if err != nil {
		return nil, nil, err
	}
	if err := set.checkLoops(); err != nil {
		return nil, nil, err
	}
	return set, resolved, nil
}

// inPlaceKeywords are the keywords that apply subschemas to the value the
// schema judges itself, not to a part of it.
var inPlaceKeywords = []string{"$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"}

// checkLoops refuses a schema whose references lead back to where they
// start without going into a part of the value ({"$ref": "#"}, or $defs
// that refer to each other): the library would recurse until the stack
// overflows, which no recover catches.
func (s *schemaSet) checkLoops() error {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var path []schemaLoc
	var visit func(n schemaNode) error
	visit = func(n schemaNode) error {
		key := n.loc.uri()
		switch state[key] {
		case done:
			return nil
		case visiting:
			start := slices.IndexFunc(path, func(l schemaLoc) bool { return l.uri() == key })
			var loop []string
			for _, l := range append(path[start:], n.loc) {
				if l.doc == s.root {
					loop = append(loop, "#"+jsonPointer(l.ptr))
				} else {
					loop = append(loop, l.uri())
				}
			}
			return fmt.Errorf("the schema refers back to itself without going into a part of the value (%s), so validating would never end", strings.Join(loop, " → "))
		}
		state[key] = visiting
		path = append(path, n.loc)
		for _, next := range s.inPlace(n) {
			if err := visit(next); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[key] = done
		return nil
	}
	for _, uri := range slices.Sorted(maps.Keys(s.docs)) {
		root, ok := s.node(schemaLoc{doc: uri})
		if !ok {
			continue
		}
		var err error
		s.eachSubschema(root, func(n schemaNode) bool {
			err = visit(n)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// inPlace returns the subschemas n applies to the value it judges.
func (s *schemaSet) inPlace(n schemaNode) []schemaNode {
	m, ok := n.value.(map[string]any)
	if !ok {
		return nil
	}
	var next []schemaNode
	for _, kw := range inPlaceKeywords {
		if n.draft == draft7 && kw != "$ref" && m["$ref"] != nil {
			continue // draft-07 ignores the keywords beside "$ref"
		}
		sub, ok := m[kw]
		if !ok {
			continue
		}
		if ref, ok := sub.(string); ok && (kw == "$ref" || kw == "$dynamicRef") {
			if t, ok := s.ref(n, ref); ok {
				next = append(next, t)
			}
			continue
		}
		next = append(next, s.children(n, kw, sub)...)
	}
	return next
}

// eachSubschema calls f with n and each of its subschemas, depth first,
// until f returns false.
func (s *schemaSet) eachSubschema(n schemaNode, f func(schemaNode) bool) bool {
	if !f(n) {
		return false
	}
	m, ok := n.value.(map[string]any)
	if !ok {
		return true
	}
	for _, kw := range slices.Sorted(maps.Keys(m)) {
		for _, c := range s.children(n, kw, m[kw]) {
			if !s.eachSubschema(c, f) {
				return false
			}
		}
	}
	return true
}

// load is the library's loader: it reads local files only. The library
// asks for a URI once and never for the schema file's own, so every call
// reads a new document.
func (s *schemaSet) load(u *url.URL) (*jsonschema.Schema, error) {
	ref := u.String()
	path := filePath(u)
	if u.Scheme != "file" {
		p, ok := "", false
		if s.remote != nil {
			p, ok = s.remote(u)
		}
		if !ok {
			return nil, &schemaRefError{Reason: fmt.Sprintf("the schema refers to %s, which is not a local file: a schema may refer only to local files (validation never uses the network)", ref)}
		}
		path = p
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &schemaRefError{Reason: "cannot read the schema file " + ref + " that the schema refers to", Err: err}
	}
	// A file without "$schema" is of the draft of the file that refers
	// to it. The library validates with the draft of the schema's file,
	// so a file of another draft would be misread.
	draft := s.docs[s.root].draft
	doc, err := s.add(ref, data, draft)
	if err != nil {
		var de *draftError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, &schemaRefError{Reason: "the file " + ref + " that the schema refers to is not a valid JSON Schema", Err: err}
	}
	if doc.draft != draft {
		return nil, &schemaRefError{Reason: fmt.Sprintf("the file %s that the schema refers to is %s, but the schema is %s: the files of one schema must use one draft",
			ref, draftName(doc.draft), draftName(draft))}
	}
	return doc.schema()
}

// schema decodes the document for the library, with its draft spelled as
// the library knows it, and keeps the result in d.lib. loadSchema calls it
// once for every document: the library loads each URI once.
func (d *schemaDoc) schema() (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(d.data, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Say it in JSON's words, not Go's.
			field := te.Field[strings.LastIndex(te.Field, ".")+1:]
			return nil, fmt.Errorf("%q is %s, want %s", field, jsonerr.ValueKind(te.Value), jsonerr.GoKind(te.Type))
		}
		return nil, err
	}
	s.Schema = d.draft
	d.lib = &s
	return d.lib, nil
}

// add decodes and indexes the document at uri, of the draft its
// "$schema" names or else of draft.
func (s *schemaSet) add(uri string, data []byte, draft string) (*schemaDoc, error) {
	doc, err := s.decode(uri, data, draft)
	if de := (*draftError)(nil); errors.As(err, &de) && uri != s.root {
		de.uri = uri
	}
	return doc, err
}

func (s *schemaSet) decode(uri string, data []byte, draft string) (*schemaDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &schemaJSONError{err}
	}
	if dec.More() {
		return nil, &schemaJSONError{errors.New("more than one JSON value")}
	}
	if !isSchema(v) {
		return nil, fmt.Errorf("a schema is a JSON object or a boolean, not %s", jsonerr.Kind(data))
	}
	doc := &schemaDoc{uri: uri, data: data, value: v, draft: draft}
	if m, ok := v.(map[string]any); ok {
		if d, ok := m["$schema"].(string); ok {
			draft, err := schemaDraft(d)
			if err != nil {
				return nil, err
			}
			doc.draft = draft
		}
	}
	base, err := url.Parse(uri)
	if err != nil {
		return nil, err
	}
	s.docs[uri] = doc
	s.resources[uri] = schemaLoc{doc: uri}
	if err := s.index(doc, v, base, nil, true); err != nil {
		return nil, err
	}
	return doc, nil
}

// index records the resources, anchors and patterns of the subschema v at
// ptr, and of its subschemas. It refuses a "$schema" inside a document
// that differs from the document's: the library would ignore it.
func (s *schemaSet) index(doc *schemaDoc, v any, base *url.URL, ptr []string, root bool) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	loc := schemaLoc{doc: doc.uri, ptr: ptr}
	if d, ok := m["$schema"].(string); ok && !root {
		draft, err := schemaDraft(d)
		if err != nil {
			return err
		}
		if draft != doc.draft {
			return fmt.Errorf("a subschema at %q declares %s (%q) in a schema of %s: one schema must use one draft",
				jsonPointer(ptr), draftName(draft), d, draftName(doc.draft))
		}
	}
	if id, ok := m["$id"].(string); ok {
		if doc.draft == draft7 && strings.HasPrefix(id, "#") {
			s.addAnchor(base, strings.TrimPrefix(id, "#"), loc)
		} else if u, err := base.Parse(id); err == nil {
			frag := u.Fragment
			u.Fragment, u.RawFragment = "", ""
			base = u
			if _, dup := s.resources[u.String()]; !dup {
				s.resources[u.String()] = loc
			}
			if frag != "" && doc.draft == draft7 {
				s.addAnchor(base, frag, loc)
			}
		}
	}
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := m[k].(string); ok && doc.draft == draft2020 {
			s.addAnchor(base, a, loc)
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for p := range pp {
			if re, err := regexp.Compile(p); err == nil {
				s.patterns[p] = re
			}
		}
	}
	for _, kw := range slices.Sorted(maps.Keys(m)) {
		sub := m[kw]
		if err := checkKeyword(doc.draft, kw, sub, ptr); err != nil {
			return err
		}
		keys := subschemaKeys(doc.draft, kw, sub)
		slices.Sort(keys)
		for _, key := range keys {
			child := sub
			childPtr := append(ptr[:len(ptr):len(ptr)], kw)
			if key != "" {
				child, _ = step(sub, key)
				childPtr = append(childPtr, key)
			}
			if err := s.index(doc, child, base, childPtr, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *schemaSet) addAnchor(base *url.URL, name string, loc schemaLoc) {
	key := base.String() + "#" + name
	if _, dup := s.anchors[key]; !dup {
		s.anchors[key] = loc
	}
}

// How a keyword holds subschemas.
type subschemaKind int

const (
	noSubschema    subschemaKind = iota
	oneSubschema                 // the value is a schema
	subschemaMap                 // an object of schemas
	subschemaList                // a non-empty array of schemas
	itemsSubschema               // draft-07 "items": a schema or an array of them
)

func keywordKind(draft, kw string) subschemaKind {
	switch kw {
	case "items":
		if draft == draft7 {
			return itemsSubschema
		}
		return oneSubschema
	case "additionalProperties", "additionalItems", "unevaluatedItems", "unevaluatedProperties",
		"propertyNames", "contains", "not", "if", "then", "else", "contentSchema":
		return oneSubschema
	case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies":
		return subschemaMap
	case "prefixItems", "allOf", "anyOf", "oneOf":
		return subschemaList
	}
	return noSubschema
}

func isSchema(v any) bool {
	switch v.(type) {
	case bool, map[string]any:
		return true
	}
	return false
}

// subschemaKeys returns where the value sub of keyword kw holds
// subschemas: [""] when it is one, the keys or indices of those that are
// when it is an object or array of them, nil when it holds none.
func subschemaKeys(draft, kw string, sub any) []string {
	kind := keywordKind(draft, kw)
	if _, ok := sub.([]any); ok && kind == itemsSubschema {
		kind = subschemaList
	}
	var keys []string
	switch kind {
	case oneSubschema, itemsSubschema:
		if isSchema(sub) {
			return []string{""}
		}
	case subschemaMap:
		if m, ok := sub.(map[string]any); ok {
			for k, v := range m {
				if isSchema(v) {
					keys = append(keys, k)
				}
			}
		}
	case subschemaList:
		if list, ok := sub.([]any); ok {
			for i, v := range list {
				if isSchema(v) {
					keys = append(keys, strconv.Itoa(i))
				}
			}
		}
	}
	return keys
}

// jsonTypes are the names "type" knows.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// checkKeyword refuses a value of kw that is not what the keyword takes,
// where the library would accept it and validate by it anyway (an unknown
// "type"), or would fail with a Go type in its message.
func checkKeyword(draft, kw string, v any, ptr []string) error {
	where := "at the root"
	if len(ptr) > 0 {
		where = "at " + strconv.Quote(jsonPointer(ptr))
	}
	bad := func(want string) error {
		got, _ := json.Marshal(v)
		if len(got) > 60 {
			got = append(got[:57], "..."...)
		}
		return fmt.Errorf("%q %s is %s, want %s", kw, where, got, want)
	}
	switch kw {
	case "type":
		names, ok := v.([]any)
		if !ok {
			names = []any{v}
		}
		for _, n := range names {
			if s, ok := n.(string); !ok || !slices.Contains(jsonTypes, s) {
				return bad("one of " + strings.Join(jsonTypes, ", ") + ", or an array of them")
			}
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if _, ok := v.(json.Number); !ok {
			return bad("a number")
		}
	case "multipleOf":
		if n, ok := v.(json.Number); !ok || !positive(n) {
			return bad("a number greater than 0")
		}
	case "required":
		if list, ok := v.([]any); !ok || !all(list, isString) {
			return bad("an array of property names")
		}
	case "dependentRequired":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object of arrays of property names")
		}
		for _, names := range m {
			if list, ok := names.([]any); !ok || !all(list, isString) {
				return bad("an object of arrays of property names")
			}
		}
	case "enum":
		if _, ok := v.([]any); !ok {
			return bad("an array")
		}
	case "uniqueItems":
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	case "pattern":
		p, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("%q %s is not a regular expression Go accepts: %w", kw, where, err)
		}
	case "patternProperties":
		if m, ok := v.(map[string]any); ok {
			for _, p := range slices.Sorted(maps.Keys(m)) {
				if _, err := regexp.Compile(p); err != nil {
					return fmt.Errorf("%q %s has a key that is not a regular expression Go accepts: %w", kw, where, err)
				}
			}
		}
	case "$ref", "$dynamicRef", "$id", "$anchor", "$dynamicAnchor", "$schema":
		if !isString(v) {
			return bad("a string")
		}
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
		n, ok := v.(json.Number)
		if i, err := n.Int64(); !ok || err != nil || i < 0 {
			if f, err := n.Float64(); !ok || err != nil || f < 0 || f != math.Trunc(f) {
				return bad("a non-negative integer")
			}
		}
	}
	switch kind := keywordKind(draft, kw); kind {
	case oneSubschema:
		if !isSchema(v) {
			return bad("a schema (an object or a boolean)")
		}
	case itemsSubschema:
		if list, ok := v.([]any); ok {
			if !all(list, isSchema) {
				return bad("a schema or an array of schemas")
			}
		} else if !isSchema(v) {
			return bad("a schema or an array of schemas")
		}
	case subschemaMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object of schemas")
		}
		for _, sub := range m {
			_, strings := sub.([]any)
			if !isSchema(sub) && !(kw == "dependencies" && strings) {
				return bad("an object of schemas")
			}
		}
	case subschemaList:
		list, ok := v.([]any)
		if !ok || len(list) == 0 || !all(list, isSchema) {
			return bad("a non-empty array of schemas")
		}
	}
	return nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func positive(n json.Number) bool {
	f, err := n.Float64()
	return err == nil && f > 0
}

func all(list []any, f func(any) bool) bool {
	for _, v := range list {
		if !f(v) {
			return false
		}
	}
	return true
}

// step is one token of a JSON pointer applied to a JSON value.
func step(v any, tok string) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		c, ok := v[tok]
		return c, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(v) || tok != strconv.Itoa(i) {
			return nil, false
		}
		return v[i], true
	}
	return nil, false
}

// schemaNode is a subschema with what explaining it needs: where it is
// (for the library), its base URI (for its "$ref"s) and its draft.
type schemaNode struct {
	loc   schemaLoc
	base  *url.URL
	value any // bool or map[string]any
	draft string
}

// node returns the subschema at loc.
func (s *schemaSet) node(loc schemaLoc) (schemaNode, bool) {
	doc, ok := s.docs[loc.doc]
	if !ok {
		return schemaNode{}, false
	}
	base, err := url.Parse(doc.uri)
	if err != nil {
		return schemaNode{}, false
	}
	n := schemaNode{loc: schemaLoc{doc: doc.uri}, base: base, value: doc.value, draft: doc.draft}
	n.base = n.withID()
	return s.walk(n, loc.ptr)
}

// walk follows a JSON pointer from the subschema n to a subschema,
// updating the base URI at each "$id" on the way.
func (s *schemaSet) walk(n schemaNode, ptr []string) (schemaNode, bool) {
	for i := 0; i < len(ptr); i++ {
		kw := ptr[i]
		m, ok := n.value.(map[string]any)
		if !ok {
			return schemaNode{}, false
		}
		sub, ok := m[kw]
		if !ok {
			return schemaNode{}, false
		}
		toks := []string{kw}
		keys := subschemaKeys(n.draft, kw, sub)
		switch {
		case len(keys) == 1 && keys[0] == "":
		case keys != nil && i+1 < len(ptr):
			i++
			if sub, ok = step(sub, ptr[i]); !ok {
				return schemaNode{}, false
			}
			toks = append(toks, ptr[i])
		default:
			// A pointer into a keyword that holds no subschema: follow it
			// as plain JSON to the end.
			for i++; i < len(ptr); i++ {
				if sub, ok = step(sub, ptr[i]); !ok {
					return schemaNode{}, false
				}
				toks = append(toks, ptr[i])
			}
		}
		if !isSchema(sub) {
			return schemaNode{}, false
		}
		n = schemaNode{
			loc:   schemaLoc{doc: n.loc.doc, ptr: append(n.loc.ptr[:len(n.loc.ptr):len(n.loc.ptr)], toks...)},
			base:  n.base,
			value: sub,
			draft: n.draft,
		}
		n.base = n.withID()
	}
	return n, true
}

// child returns the subschema of n under the keyword kw (and key, for the
// keywords that hold several).
func (s *schemaSet) child(n schemaNode, kw string, key ...string) (schemaNode, bool) {
	return s.walk(n, append([]string{kw}, key...))
}

// children returns the subschemas of n under the keyword kw, whose value
// is sub, in the order of their keys.
func (s *schemaSet) children(n schemaNode, kw string, sub any) []schemaNode {
	keys := subschemaKeys(n.draft, kw, sub)
	slices.Sort(keys)
	var cs []schemaNode
	for _, key := range keys {
		path := []string{kw}
		if key != "" { // "": sub is the subschema
			path = append(path, key)
		}
		if c, ok := s.walk(n, path); ok {
			cs = append(cs, c)
		}
	}
	return cs
}

// withID returns the base URI of n's own subschemas: n's base changed by
// its "$id".
func (n schemaNode) withID() *url.URL {
	m, ok := n.value.(map[string]any)
	if !ok {
		return n.base
	}
	id, ok := m["$id"].(string)
	if !ok || (n.draft == draft7 && strings.HasPrefix(id, "#")) {
		return n.base
	}
	u, err := n.base.Parse(id)
	if err != nil {
		return n.base
	}
	u.Fragment, u.RawFragment = "", ""
	return u
}

// ref returns the subschema a "$ref" of n names.
func (s *schemaSet) ref(n schemaNode, ref string) (schemaNode, bool) {
	u, err := n.base.Parse(ref)
	if err != nil {
		return schemaNode{}, false
	}
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	if frag != "" && !strings.HasPrefix(frag, "/") {
		loc, ok := s.anchors[u.String()+"#"+frag]
		if !ok {
			return schemaNode{}, false
		}
		return s.node(loc)
	}
	loc, ok := s.resources[u.String()]
	if !ok {
		return schemaNode{}, false
	}
	res, ok := s.node(loc)
	if !ok || frag == "" {
		return res, ok
	}
	var toks []string
	for t := range strings.SplitSeq(frag[1:], "/") {
		t = strings.ReplaceAll(t, "~1", "/")
		toks = append(toks, strings.ReplaceAll(t, "~0", "~"))
	}
	return s.walk(res, toks)
}

// fileURI returns the file URL of the absolute path abs.
func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// filePath returns the path of a file URL.
func filePath(u *url.URL) string {
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // "/C:/dir" on Windows
	}
	return filepath.FromSlash(p)
}
