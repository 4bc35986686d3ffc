package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// The library decides whether an answer is valid, but reports only the
// first violation it meets, in an order that depends on map iteration, and
// names schema locations rather than the answer's. So a rejected answer is
// explained here: the explainer walks the schema beside the answer and
// asks the library about each subschema (is this value valid against it?)
// and each assertion keyword on its own, so that what it reports agrees
// with the library's verdict, and it words each failed keyword itself,
// with the JSON pointer of the value. The walk is sorted, so the same
// answer always gets the same text. Explaining costs library compilations
// of parts of the schema, paid by the validator's first rejected answers
// only: the schemaSet keeps them.

// explain returns every violation of inst, which the library rejected.
func (s *schemaSet) explain(inst any) []violation {
	e := &explainer{set: s}
	if root, ok := s.node(schemaLoc{doc: s.root}); ok {
		e.explain(root, inst, nil)
	}
	if len(e.vs) == 0 {
		e.add(nil, "does not match the schema")
	}
	return e.vs
}

// explainer is one explanation: its violations. The library's
// compilations it asks are the schemaSet's, shared with the validator's
// other explanations.
type explainer struct {
	set *schemaSet
	vs  []violation
}

func (e *explainer) add(at []string, msg string) {
	e.vs = append(e.vs, violation{ptr: slices.Clone(at), msg: msg})
}

// loaded is the library's loader for explanations: the documents
// loadSchema read and decoded. It reads no file.
func (s *schemaSet) loaded(u *url.URL) (*jsonschema.Schema, error) {
	doc, ok := s.docs[u.String()]
	if !ok || doc.lib == nil {
		return nil, fmt.Errorf("no schema document %s", u)
	}
	return doc.lib, nil
}

// valid asks the library whether inst satisfies the subschema n in its
// document; known is false when the library could not say.
func (e *explainer) valid(n schemaNode, inst any) (valid, known bool) {
	// A subschema that is only a "$ref" is its target: ask about that,
	// which may compile alone (a chain of them is followed a few steps).
	for range 8 {
		ref, ok := onlyRef(n)
		if !ok {
			break
		}
		t, ok := e.set.ref(n, ref)
		if !ok {
			break
		}
		n = t
	}
	if b, ok := n.value.(bool); ok {
		return b, true
	}
	key := n.loc.uri()
	rs := e.set.compiled(e.set.nodes, key, func() (rs *jsonschema.Resolved) {
		if refless(n.value) {
			// Nothing in it refers elsewhere: compile it alone, which
			// costs its size rather than its document's. Its base URI
			// (its "$id" applied) stands for its "$id".
			alone := maps.Clone(n.value.(map[string]any))
			delete(alone, "$id")
			if data, err := json.Marshal(alone); err == nil {
				var s jsonschema.Schema
				if err := json.Unmarshal(data, &s); err == nil {
					s.Schema = n.draft
					rs, _ = resolveSafely(&s, &jsonschema.ResolveOptions{BaseURI: n.base.String()})
				}
			}
		} else {
			wrapper := &jsonschema.Schema{Schema: n.draft, Ref: key}
			rs, _ = resolveSafely(wrapper, &jsonschema.ResolveOptions{Loader: e.set.loaded})
		}
		return rs
	})
	return e.check(rs, inst)
}

// onlyRef returns the "$ref" of n when it is all n says: no other keyword
// but annotations (or, in draft-07, whatever is beside it).
func onlyRef(n schemaNode) (string, bool) {
	m, _ := n.value.(map[string]any)
	ref, ok := m["$ref"].(string)
	if !ok || n.draft == draft7 {
		return ref, ok
	}
	for k := range m {
		switch k {
		case "$ref", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly":
		default:
			return "", false
		}
	}
	return ref, true
}

// refless reports whether a JSON value holds no "$ref" or "$dynamicRef"
// key at any depth.
func refless(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if k == "$ref" || k == "$dynamicRef" || !refless(c) {
				return false
			}
		}
	case []any:
		for _, c := range v {
			if !refless(c) {
				return false
			}
		}
	}
	return true
}

// leafValid asks the library whether inst satisfies the keyword kw with
// the value v, alone: kw is an assertion, which needs no other keyword.
func (e *explainer) leafValid(draft, kw string, v, inst any) (valid, known bool) {
	data, err := json.Marshal(map[string]any{"$schema": draft, kw: v})
	if err != nil {
		return false, false
	}
	rs := e.set.compiled(e.set.leaves, string(data), func() (rs *jsonschema.Resolved) {
		var s jsonschema.Schema
		if err := json.Unmarshal(data, &s); err == nil {
			rs, _ = resolveSafely(&s, nil)
		}
		return rs
	})
	return e.check(rs, inst)
}

func (e *explainer) check(rs *jsonschema.Resolved, inst any) (valid, known bool) {
	if rs == nil {
		return false, false
	}
	err := validateSafely(rs, inst)
	if pe := (*schemaPanicError)(nil); errors.As(err, &pe) {
		return false, false
	}
	return err == nil, true
}

func resolveSafely(s *jsonschema.Schema, opts *jsonschema.ResolveOptions) (rs *jsonschema.Resolved, err error) {
	defer func() {
		if p := recover(); p != nil {
			rs, err = nil, &schemaPanicError{p}
		}
	}()
	return s.Resolve(opts)
}

// sub explains inst against the subschema of n under kw (and key) when the
// library says inst fails it.
func (e *explainer) sub(n schemaNode, inst any, at []string, kw string, key ...string) {
	c, ok := e.set.child(n, kw, key...)
	if !ok {
		return
	}
	if valid, known := e.valid(c, inst); known && !valid {
		e.explain(c, inst, at)
	}
}

// explain adds the violations of inst, at the instance location at,
// against n, which inst fails.
func (e *explainer) explain(n schemaNode, inst any, at []string) {
	m, ok := n.value.(map[string]any)
	if !ok {
		e.add(at, "not allowed (false schema)")
		return
	}
	before := len(e.vs)
	// A "$dynamicRef" is followed as a "$ref", which it is unless the
	// dynamic scope holds another target: then the library's verdict on
	// the target alone may differ, and the fallback below says so.
	for _, kw := range []string{"$ref", "$dynamicRef"} {
		if ref, ok := m[kw].(string); ok {
			if t, ok := e.set.ref(n, ref); ok {
				if valid, known := e.valid(t, inst); known && !valid {
					e.explain(t, inst, at)
				}
			}
		}
	}
	if _, ok := m["$ref"]; !ok || n.draft != draft7 { // draft-07 ignores the keywords beside "$ref"
		e.assertions(n, m, inst, at)
		switch inst := inst.(type) {
		case map[string]any:
			e.object(n, m, inst, at)
			e.unevaluatedProperties(n, m, inst, at)
		case []any:
			e.array(n, m, inst, at)
			e.unevaluatedItems(n, m, inst, at)
		}
		e.applicators(n, m, inst, at)
	}
	if len(e.vs) > before {
		return
	}
	// Nothing above failed, so a keyword explained nowhere did.
	named := false
	for _, kw := range []string{"unevaluatedProperties", "unevaluatedItems", "$dynamicRef"} {
		if _, ok := m[kw]; ok {
			e.add(at, quote(kw)+" failed")
			named = true
		}
	}
	if !named {
		e.add(at, "does not match the schema")
	}
}

// unevaluatedProperties explains the properties of obj that n's
// "unevaluatedProperties" judges: those no other keyword of n, nor a
// subschema of n that obj passes, evaluated.
func (e *explainer) unevaluatedProperties(n schemaNode, m map[string]any, obj map[string]any, at []string) {
	u, ok := m["unevaluatedProperties"]
	if !ok {
		return
	}
	ev := evaluation{props: map[string]bool{}}
	if !e.evaluate(n, obj, &ev, true, 0) || ev.all {
		return
	}
	var rest []string
	for _, p := range slices.Sorted(maps.Keys(obj)) {
		if !ev.props[p] {
			rest = append(rest, p)
		}
	}
	if len(rest) == 0 {
		return
	}
	if b, ok := u.(bool); ok && !b {
		e.add(at, "unevaluated properties "+quoteList(rest)+" not allowed")
		return
	}
	for _, p := range rest {
		e.sub(n, obj[p], within(at, p), "unevaluatedProperties")
	}
}

// unevaluatedItems explains the items of arr that n's "unevaluatedItems"
// judges, as unevaluatedProperties does for properties.
func (e *explainer) unevaluatedItems(n schemaNode, m map[string]any, arr []any, at []string) {
	u, ok := m["unevaluatedItems"]
	if !ok {
		return
	}
	ev := evaluation{items: map[int]bool{}}
	if !e.evaluate(n, arr, &ev, true, 0) || ev.all {
		return
	}
	var rest []string
	for i := ev.prefix; i < len(arr); i++ {
		if !ev.items[i] {
			rest = append(rest, strconv.Itoa(i))
		}
	}
	if len(rest) == 0 {
		return
	}
	if b, ok := u.(bool); ok && !b {
		noun := "items"
		if len(rest) == 1 {
			noun = "item"
		}
		e.add(at, "unevaluated "+noun+" "+strings.Join(rest, ", ")+" not allowed")
		return
	}
	for _, i := range rest {
		k, _ := strconv.Atoi(i)
		e.sub(n, arr[k], within(at, i), "unevaluatedItems")
	}
}

// evaluation is what the keywords of a schema evaluated of an object or
// array: the annotations "unevaluatedProperties" and "unevaluatedItems"
// read.
type evaluation struct {
	all    bool
	props  map[string]bool
	prefix int // items 0 to prefix-1
	items  map[int]bool
}

// evaluate adds to ev what n evaluates of inst, with the subschemas inst
// passes (annotations of a failed subschema are dropped). self leaves out
// n's own "unevaluated*" keywords, whose input this is. It returns false
// when it cannot tell: a "$dynamicRef", or "$ref"s nested too deep.
func (e *explainer) evaluate(n schemaNode, inst any, ev *evaluation, self bool, depth int) bool {
	m, ok := n.value.(map[string]any)
	if !ok {
		return true
	}
	if depth > 32 {
		return false
	}
	if _, ok := m["$dynamicRef"]; ok {
		return false
	}
	obj, isObj := inst.(map[string]any)
	arr, isArr := inst.([]any)
	switch {
	case isObj:
		if _, ok := m["additionalProperties"]; ok {
			ev.all = true
		}
		if _, ok := m["unevaluatedProperties"]; ok && !self {
			ev.all = true
		}
		props, _ := m["properties"].(map[string]any)
		pats, _ := m["patternProperties"].(map[string]any)
		for p := range obj {
			if _, ok := props[p]; ok {
				ev.props[p] = true
			}
			for pat := range pats {
				if re := e.set.patterns[pat]; re != nil && re.MatchString(p) {
					ev.props[p] = true
				}
			}
		}
	case isArr:
		prefixKw, restKw := itemKeywords(n.draft, m)
		if list, ok := m[prefixKw].([]any); ok {
			ev.prefix = max(ev.prefix, min(len(list), len(arr)))
		}
		if _, ok := m[restKw]; ok {
			ev.all = true
		}
		if _, ok := m["unevaluatedItems"]; ok && !self {
			ev.all = true
		}
		if c, ok := e.set.child(n, "contains"); ok {
			for i, v := range arr {
				if valid, known := e.valid(c, v); known && valid {
					ev.items[i] = true
				}
			}
		}
	default:
		return true
	}
	// In-place subschemas that inst passes add their annotations.
	passes := func(c schemaNode) bool {
		valid, known := e.valid(c, inst)
		return known && valid
	}
	var inPlace []schemaNode
	if ref, ok := m["$ref"].(string); ok {
		t, ok := e.set.ref(n, ref)
		if !ok {
			return false
		}
		inPlace = append(inPlace, t)
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := m[kw].([]any)
		for i := range list {
			if c, ok := e.set.child(n, kw, strconv.Itoa(i)); ok {
				inPlace = append(inPlace, c)
			}
		}
	}
	if c, ok := e.set.child(n, "if"); ok {
		branch := "else"
		if passes(c) {
			inPlace = append(inPlace, c)
			branch = "then"
		}
		if b, ok := e.set.child(n, branch); ok {
			inPlace = append(inPlace, b)
		}
	}
	if deps, ok := m["dependentSchemas"].(map[string]any); ok && isObj {
		for p := range deps {
			if _, present := obj[p]; present {
				if c, ok := e.set.child(n, "dependentSchemas", p); ok {
					inPlace = append(inPlace, c)
				}
			}
		}
	}
	for _, c := range inPlace {
		if passes(c) && !e.evaluate(c, inst, ev, false, depth+1) {
			return false
		}
	}
	return true
}

// assertionKeywords are the keywords that judge a value by themselves.
var assertionKeywords = []string{
	"type", "enum", "const",
	"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "pattern",
	"minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties", "required", "dependentRequired",
}

func (e *explainer) assertions(n schemaNode, m map[string]any, inst any, at []string) {
	for _, kw := range assertionKeywords {
		v, ok := m[kw]
		if !ok {
			continue
		}
		if valid, known := e.leafValid(n.draft, kw, v, inst); !known || valid {
			continue
		}
		for _, msg := range assertionMessages(kw, v, inst) {
			e.add(at, msg)
		}
	}
}

// assertionMessages words the failure of the assertion kw (with the value
// v) on inst.
func assertionMessages(kw string, v, inst any) []string {
	switch kw {
	case "type":
		var want []string
		switch v := v.(type) {
		case string:
			want = []string{v}
		case []any:
			for _, t := range v {
				want = append(want, fmt.Sprint(t))
			}
		}
		return []string{fmt.Sprintf("got %s, want %s", schemaType(inst), strings.Join(want, " or "))}
	case "enum":
		list, _ := v.([]any)
		if len(list) == 1 {
			return []string{"value must be " + display(list[0])}
		}
		want := make([]string, len(list))
		for i, w := range list {
			want[i] = display(w)
		}
		return []string{"value must be one of " + strings.Join(want, ", ")}
	case "const":
		return []string{"value must be " + display(v)}
	case "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return []string{fmt.Sprintf("%s: got %s, want %s", kw, display(inst), display(v))}
	case "minLength", "maxLength":
		s, _ := inst.(string)
		return []string{fmt.Sprintf("%s: got %d, want %s", kw, utf8.RuneCountInString(s), display(v))}
	case "pattern":
		s, _ := inst.(string)
		p, _ := v.(string)
		return []string{quote(s) + " does not match pattern " + quote(p)}
	case "minItems", "maxItems":
		a, _ := inst.([]any)
		return []string{fmt.Sprintf("%s: got %d, want %s", kw, len(a), display(v))}
	case "uniqueItems":
		a, _ := inst.([]any)
		for j := range a {
			for i := range j {
				if jsonschema.Equal(a[i], a[j]) {
					return []string{fmt.Sprintf("items at %d and %d are equal", i, j)}
				}
			}
		}
	case "minProperties", "maxProperties":
		o, _ := inst.(map[string]any)
		return []string{fmt.Sprintf("%s: got %d, want %s", kw, len(o), display(v))}
	case "required":
		o, _ := inst.(map[string]any)
		names, _ := v.([]any)
		if missing := missingProperties(o, names); len(missing) > 0 {
			if len(missing) == 1 {
				return []string{"missing property " + quote(missing[0])}
			}
			return []string{"missing properties " + quoteList(missing)}
		}
	case "dependentRequired":
		o, _ := inst.(map[string]any)
		deps, _ := v.(map[string]any)
		var msgs []string
		for _, p := range slices.Sorted(maps.Keys(deps)) {
			names, _ := deps[p].([]any)
			if msg := dependencyMessage(o, p, names); msg != "" {
				msgs = append(msgs, msg)
			}
		}
		return msgs
	}
	return []string{quote(kw) + " failed"}
}

// missingProperties returns the names of names that o lacks.
func missingProperties(o map[string]any, names []any) []string {
	var missing []string
	for _, name := range names {
		s, _ := name.(string)
		if _, ok := o[s]; !ok {
			missing = append(missing, s)
		}
	}
	return missing
}

// dependencyMessage words what o lacks of the properties names, which its
// property p requires; "" when o has them or lacks p.
func dependencyMessage(o map[string]any, p string, names []any) string {
	if _, ok := o[p]; !ok {
		return ""
	}
	missing := missingProperties(o, names)
	if len(missing) == 0 {
		return ""
	}
	noun := "properties"
	if len(missing) == 1 {
		noun = "property"
	}
	return fmt.Sprintf("%s %s required, if %s exists", noun, quoteList(missing), quote(p))
}

func (e *explainer) object(n schemaNode, m map[string]any, obj map[string]any, at []string) {
	names := slices.Sorted(maps.Keys(obj))
	props, _ := m["properties"].(map[string]any)
	pats, _ := m["patternProperties"].(map[string]any)
	patterns := slices.Sorted(maps.Keys(pats))
	var extra []string
	for _, p := range names {
		matched := false
		if _, ok := props[p]; ok {
			matched = true
			e.sub(n, obj[p], within(at, p), "properties", p)
		}
		for _, pat := range patterns {
			if re := e.set.patterns[pat]; re != nil && re.MatchString(p) {
				matched = true
				e.sub(n, obj[p], within(at, p), "patternProperties", pat)
			}
		}
		if !matched {
			extra = append(extra, p)
		}
	}
	if ap, ok := m["additionalProperties"]; ok && len(extra) > 0 {
		if b, ok := ap.(bool); ok && !b {
			e.add(at, "additional properties "+quoteList(extra)+" not allowed")
		} else {
			for _, p := range extra {
				e.sub(n, obj[p], within(at, p), "additionalProperties")
			}
		}
	}
	if c, ok := e.set.child(n, "propertyNames"); ok {
		for _, p := range names {
			if valid, known := e.valid(c, p); !known || valid {
				continue
			}
			// A name has no location of its own: its violations are the
			// object's, each naming it.
			sub := &explainer{set: e.set}
			sub.explain(c, p, nil)
			for _, v := range sub.vs {
				e.add(at, "property name "+quote(p)+": "+v.msg)
			}
		}
	}
	deps := "dependentSchemas"
	if n.draft == draft7 {
		deps = "dependencies"
	}
	if d, ok := m[deps].(map[string]any); ok {
		for _, p := range slices.Sorted(maps.Keys(d)) {
			if _, ok := obj[p]; !ok {
				continue
			}
			if names, ok := d[p].([]any); ok { // draft-07's dependencies on properties
				if msg := dependencyMessage(obj, p, names); msg != "" {
					e.add(at, msg)
				}
				continue
			}
			e.sub(n, obj, at, deps, p)
		}
	}
}

func (e *explainer) array(n schemaNode, m map[string]any, arr []any, at []string) {
	prefixKw, restKw := itemKeywords(n.draft, m)
	prefix := 0
	if list, ok := m[prefixKw].([]any); ok {
		prefix = len(list)
	}
	item := func(i int) []string { return within(at, strconv.Itoa(i)) }
	for i := range min(prefix, len(arr)) {
		e.sub(n, arr[i], item(i), prefixKw, strconv.Itoa(i))
	}
	if rest, ok := m[restKw]; ok && len(arr) > prefix {
		if b, ok := rest.(bool); ok && !b {
			e.add(at, fmt.Sprintf("got %d items, want at most %d", len(arr), prefix))
		} else {
			for i := prefix; i < len(arr); i++ {
				e.sub(n, arr[i], item(i), restKw)
			}
		}
	}
	if c, ok := e.set.child(n, "contains"); ok {
		matched := 0
		for _, v := range arr {
			valid, known := e.valid(c, v)
			if !known {
				return
			}
			if valid {
				matched++
			}
		}
		minC, hasMin := intKeyword(m, "minContains")
		maxC, hasMax := intKeyword(m, "maxContains")
		switch {
		case !hasMin && matched == 0:
			e.add(at, "no items match the 'contains' schema")
		case hasMin && matched < minC:
			e.add(at, fmt.Sprintf("minContains: got %d items matching 'contains', want %d", matched, minC))
		}
		if hasMax && matched > maxC {
			e.add(at, fmt.Sprintf("maxContains: got %d items matching 'contains', want %d", matched, maxC))
		}
	}
}

// itemKeywords returns the keyword of the schema m that judges an array's
// first items, each by a subschema of its own ("" when m's draft has none),
// and the keyword that judges the items after them: "prefixItems" and
// "items"; in draft-07 "items" and "additionalItems" when "items" is an
// array, else "" and "items".
func itemKeywords(draft string, m map[string]any) (prefixKw, restKw string) {
	if draft != draft7 {
		return "prefixItems", "items"
	}
	if _, ok := m["items"].([]any); ok {
		return "items", "additionalItems"
	}
	return "", "items"
}

func intKeyword(m map[string]any, kw string) (int, bool) {
	n, ok := m[kw].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil {
		return 0, false
	}
	return int(f), true
}

func (e *explainer) applicators(n schemaNode, m map[string]any, inst any, at []string) {
	if list, ok := m["allOf"].([]any); ok {
		for i := range list {
			e.sub(n, inst, at, "allOf", strconv.Itoa(i))
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if list, ok := m[kw].([]any); ok {
			e.alternatives(n, kw, len(list), inst, at)
		}
	}
	if c, ok := e.set.child(n, "not"); ok {
		if valid, known := e.valid(c, inst); known && valid {
			e.add(at, "'not' failed")
		}
	}
	if c, ok := e.set.child(n, "if"); ok {
		valid, known := e.valid(c, inst)
		branch := "then"
		if !valid {
			branch = "else"
		}
		if known {
			e.sub(n, inst, at, branch)
		}
	}
}

// alternatives explains the count alternatives of anyOf or oneOf (kw).
func (e *explainer) alternatives(n schemaNode, kw string, count int, inst any, at []string) {
	var alts []schemaNode
	var matched []string
	for i := range count {
		c, ok := e.set.child(n, kw, strconv.Itoa(i))
		if !ok {
			return
		}
		valid, known := e.valid(c, inst)
		if !known {
			return
		}
		if valid {
			matched = append(matched, strconv.Itoa(i))
		}
		alts = append(alts, c)
	}
	switch {
	case len(matched) == 0:
		msg := "'anyOf' failed"
		if kw == "oneOf" {
			msg = "'oneOf' failed, none matched"
		}
		e.add(at, msg)
		for _, c := range alts {
			e.explain(c, inst, at)
		}
	case kw == "oneOf" && len(matched) > 1:
		e.add(at, "'oneOf' failed, subschemas "+strings.Join(matched, ", ")+" matched")
	}
}

// within is the instance location of a value inside the one at at.
func within(at []string, tok ...string) []string { return slices.Concat(at, tok) }

// schemaType is the JSON type of a decoded value, in the words of "type"
// (a number is "number", whole or not).
func schemaType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// display writes a JSON value for a message: a string quoted, a number as
// JSON writes it, anything else as compact JSON.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case float64:
		if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// quoteList writes names for a message, each quoted, separated by ", ".
func quoteList(names []string) string {
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = quote(name)
	}
	return strings.Join(quoted, ", ")
}

// quote writes s in single quotes, escaped as a Go string.
func quote(s string) string {
	q := strconv.Quote(s)
	return "'" + q[1:len(q)-1] + "'"
}
