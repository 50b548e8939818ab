#!/usr/bin/env python3
"""Writes v1alpha3-v1beta1-cases.json: requests against the Workload API's v1alpha3 and v1beta1
(and v1alpha2 objects read back through them) with the answers kube-apiserver gives by the upstream
types' validation tags (k8s.io/api scheduling/v1alpha3 and v1beta1: +k8s:required, +k8s:immutable,
+k8s:update=NoSet/NoUnset/NoAddItem/NoRemoveItem, +k8s:maxItems, unions, formats, defaults) and
its hand-written rules, in the format of ../kube-1.36.3/workload-api-corpus.json (the ctest
WorkloadApiCorpus.V1alpha3AndV1beta1CasesMatch replays both).
Run: python3 cases.py > v1alpha3-v1beta1-cases.json"""
import json
NS = "default"
def G(v): return "/apis/scheduling.k8s.io/%s/namespaces/%s" % (v, NS)
B, A3, A2 = G("v1beta1"), G("v1alpha3"), G("v1alpha2")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
MERGE = "application/merge-patch+json"
RACK = {"topology": [{"key": "topology.kubernetes.io/rack"}]}
ZONE = {"topology": [{"key": "topology.kubernetes.io/zone"}]}
FIN = ["scheduling.k8s.io/podgroup-protection"]
cases = []
def case(cid, method, path, body, response, ctype=None, accept=None):
    cases.append({"id": cid, "method": method, "path": path, "body": body, "contentType": ctype,
                  "accept": accept, "response": response})
def invalid(*causes): return {"code": 422, "reason": "Invalid", "causes": sorted([list(c) for c in causes])}
def forbidden(): return {"code": 403, "reason": "Forbidden", "causes": []}
def obj(code, o): return {"code": code, "object": o}
def meta(name, **extra):
    m = {"name": name, "namespace": NS}; m.update(extra); return m
def wl(v, name, spec): return {"apiVersion": "scheduling.k8s.io/" + v, "kind": "Workload", "metadata": {"name": name}, "spec": spec}
def tmpl(name, **kw):
    t = {"name": name, "schedulingPolicy": kw.pop("policy", {"gang": {"minCount": 4}})}
    t.update(kw); return t
def pg(v, name, spec): return {"apiVersion": "scheduling.k8s.io/" + v, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}
def cpg(name, spec): return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": name}, "spec": spec}

# ---------------------------------------------------------------- v1beta1 Workload
t_ok = tmpl("workers", schedulingConstraints=RACK, disruptionMode={"all": {}}, preemptionPolicy="Never")
case("beta-workload-create", "POST", B + "/workloads", wl("v1beta1", "wb-ok", {"podGroupTemplates": [t_ok]}),
     obj(201, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("wb-ok"),
               "spec": {"podGroupTemplates": [t_ok]}}))
case("beta-workload-read-as-v1alpha3", "GET", A3 + "/workloads/wb-ok", None,
     obj(200, {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "Workload", "metadata": meta("wb-ok"),
               "spec": {"podGroupTemplates": [t_ok]}}))
case("beta-workload-read-as-v1alpha2", "GET", A2 + "/workloads/wb-ok", None,
     obj(200, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": meta("wb-ok"),
               "spec": {"podGroupTemplates": [tmpl("workers", schedulingConstraints=RACK, disruptionMode="PodGroup")]}}))
case("beta-workload-no-templates", "POST", B + "/workloads", wl("v1beta1", "wb-none", {}),
     invalid(("spec", "FieldValueInvalid")))
case("beta-workload-both-template-kinds", "POST", B + "/workloads",
     wl("v1beta1", "wb-both", {"podGroupTemplates": [tmpl("a")],
                               "compositePodGroupTemplates": [{"name": "c", "schedulingPolicy": {"basic": {}},
                                                               "podGroupTemplates": [tmpl("d")]}]}),
     invalid(("spec", "FieldValueInvalid")))
case("beta-workload-nine-templates", "POST", B + "/workloads",
     wl("v1beta1", "wb-nine", {"podGroupTemplates": [tmpl("t%d" % i) for i in range(9)]}),
     invalid(("spec.podGroupTemplates", "FieldValueTooMany")))
case("beta-workload-duplicate-template", "POST", B + "/workloads",
     wl("v1beta1", "wb-dup", {"podGroupTemplates": [tmpl("a"), tmpl("b"), tmpl("a")]}),
     invalid(("spec.podGroupTemplates[2]", "FieldValueDuplicate")))
case("beta-workload-bad-preemption-policy", "POST", B + "/workloads",
     wl("v1beta1", "wb-preempt", {"podGroupTemplates": [tmpl("a", preemptionPolicy="Sometimes")]}),
     invalid(("spec.podGroupTemplates[0].preemptionPolicy", "FieldValueNotSupported")))
case("beta-workload-two-disruption-modes", "POST", B + "/workloads",
     wl("v1beta1", "wb-disr", {"podGroupTemplates": [tmpl("a", disruptionMode={"single": {}, "all": {}})]}),
     invalid(("spec.podGroupTemplates[0].disruptionMode", "FieldValueInvalid")))
case("beta-workload-priority-too-high", "POST", B + "/workloads",
     wl("v1beta1", "wb-prio", {"podGroupTemplates": [tmpl("a", priority=1000000001)]}),
     invalid(("spec.podGroupTemplates[0].priority", "FieldValueInvalid")))
case("beta-workload-priorities-differ", "POST", B + "/workloads",
     wl("v1beta1", "wb-prios", {"podGroupTemplates": [tmpl("a", priority=5), tmpl("b")]}),
     invalid(("spec", "FieldValueInvalid")))
case("beta-workload-priority-class-missing", "POST", B + "/workloads",
     wl("v1beta1", "wb-pc", {"podGroupTemplates": [tmpl("a", priorityClassName="no-such-class")]}),
     forbidden())
case("beta-workload-controller-ref-bad-kind", "POST", B + "/workloads",
     wl("v1beta1", "wb-ctl", {"controllerRef": {"apiGroup": "batch", "kind": "Job/x", "name": ".."},
                              "podGroupTemplates": [tmpl("a")]}),
     invalid(("spec.controllerRef.kind", "FieldValueInvalid"), ("spec.controllerRef.name", "FieldValueInvalid")))
# Updates: minCount may change; templates may not be added or removed; their other fields are fixed.
t_ok8 = dict(t_ok, schedulingPolicy={"gang": {"minCount": 8}})
case("beta-workload-change-mincount", "PATCH", B + "/workloads/wb-ok", {"spec": {"podGroupTemplates": [t_ok8]}},
     obj(200, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("wb-ok"),
               "spec": {"podGroupTemplates": [t_ok8]}}), MERGE)
case("beta-workload-add-template", "PATCH", B + "/workloads/wb-ok",
     {"spec": {"podGroupTemplates": [t_ok8, tmpl("extra")]}},
     invalid(("spec.podGroupTemplates[1]", "FieldValueForbidden")), MERGE)
case("beta-workload-change-topology", "PATCH", B + "/workloads/wb-ok",
     {"spec": {"podGroupTemplates": [dict(t_ok8, schedulingConstraints=ZONE)]}},
     invalid(("spec.podGroupTemplates[0].schedulingConstraints", "FieldValueInvalid")), MERGE)
case("beta-workload-change-disruption", "PATCH", B + "/workloads/wb-ok",
     {"spec": {"podGroupTemplates": [dict(t_ok8, disruptionMode={"single": {}})]}},
     invalid(("spec.podGroupTemplates[0].disruptionMode", "FieldValueInvalid")), MERGE)
case("beta-workload-gang-to-basic", "PATCH", B + "/workloads/wb-ok",
     {"spec": {"podGroupTemplates": [dict(t_ok8, schedulingPolicy={"basic": {}})]}},
     invalid(("spec.podGroupTemplates[0].schedulingPolicy.basic", "FieldValueInvalid"),
             ("spec.podGroupTemplates[0].schedulingPolicy.gang", "FieldValueInvalid")), MERGE)
case("beta-workload-two-create", "POST", B + "/workloads",
     wl("v1beta1", "wb-two", {"podGroupTemplates": [tmpl("a"), tmpl("b")]}),
     obj(201, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("wb-two"),
               "spec": {"podGroupTemplates": [dict(tmpl("a"), schedulingConstraints=None),
                                              dict(tmpl("b"), schedulingConstraints=None)]}}))
case("beta-workload-remove-template", "PATCH", B + "/workloads/wb-two",
     {"spec": {"podGroupTemplates": [tmpl("a")]}},
     invalid(("spec.podGroupTemplates", "FieldValueForbidden")), MERGE)
case("beta-workload-metadata-update", "PATCH", B + "/workloads/wb-two", {"metadata": {"labels": {"team": "a"}}},
     obj(200, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("wb-two", labels={"team": "a"}),
               "spec": {"podGroupTemplates": [dict(tmpl("a"), schedulingConstraints=None),
                                              dict(tmpl("b"), schedulingConstraints=None)]}}), MERGE)
# Composite templates: a tree of groups.
pair = {"name": "pair", "schedulingPolicy": {"gang": {"minGroupCount": 1}}, "schedulingConstraints": RACK,
        "podGroupTemplates": [tmpl("left", policy={"gang": {"minCount": 2}}),
                              tmpl("right", policy={"gang": {"minCount": 2}})]}
pair_out = dict(pair, podGroupTemplates=[dict(t, schedulingConstraints=None) for t in pair["podGroupTemplates"]])
case("beta-workload-composite-create", "POST", B + "/workloads",
     wl("v1beta1", "wc-pair", {"compositePodGroupTemplates": [pair]}),
     obj(201, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("wc-pair"),
               "spec": {"podGroupTemplates": None, "compositePodGroupTemplates": [pair_out]}}))
case("beta-workload-composite-no-child", "POST", B + "/workloads",
     wl("v1beta1", "wc-empty", {"compositePodGroupTemplates": [{"name": "c", "schedulingPolicy": {"basic": {}}}]}),
     invalid(("spec.compositePodGroupTemplates[0]", "FieldValueInvalid")))
case("beta-workload-composite-name-reused", "POST", B + "/workloads",
     wl("v1beta1", "wc-dup", {"compositePodGroupTemplates": [{"name": "x", "schedulingPolicy": {"basic": {}},
                                                              "podGroupTemplates": [tmpl("x")]}]}),
     invalid(("spec.compositePodGroupTemplates[0].podGroupTemplates[0].name", "FieldValueDuplicate")))
def nest(depth, i=0):
    c = {"name": "c%d" % i, "schedulingPolicy": {"basic": {}}}
    if depth == 1:
        c["podGroupTemplates"] = [tmpl("leaf")]
    else:
        c["compositePodGroupTemplates"] = [nest(depth - 1, i + 1)]
    return c
case("beta-workload-composite-too-deep", "POST", B + "/workloads",
     wl("v1beta1", "wc-deep", {"compositePodGroupTemplates": [nest(4)]}),
     invalid(("spec.compositePodGroupTemplates[0]", "FieldValueInvalid")))
case("beta-workload-composite-min-group-count-zero", "POST", B + "/workloads",
     wl("v1beta1", "wc-zero", {"compositePodGroupTemplates": [dict(pair, schedulingPolicy={"gang": {"minGroupCount": 0}})]}),
     invalid(("spec.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount", "FieldValueRequired")))
case("beta-workload-composite-two-topology", "POST", B + "/workloads",
     wl("v1beta1", "wc-topo", {"compositePodGroupTemplates": [dict(pair, schedulingConstraints={"topology": [{"key": "a"}, {"key": "b"}]})]}),
     invalid(("spec.compositePodGroupTemplates[0].schedulingConstraints.topology", "FieldValueTooMany")))
case("beta-workload-composite-add-child", "PATCH", B + "/workloads/wc-pair",
     {"spec": {"compositePodGroupTemplates": [dict(pair, podGroupTemplates=pair["podGroupTemplates"] + [tmpl("third")])]}},
     invalid(("spec.compositePodGroupTemplates[0].podGroupTemplates[2]", "FieldValueForbidden")), MERGE)
case("beta-workload-composite-change-min-group-count", "PATCH", B + "/workloads/wc-pair",
     {"spec": {"compositePodGroupTemplates": [dict(pair, schedulingPolicy={"gang": {"minGroupCount": 2}})]}},
     obj(200, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("wc-pair"),
               "spec": {"podGroupTemplates": None,
                        "compositePodGroupTemplates": [dict(pair_out, schedulingPolicy={"gang": {"minGroupCount": 2}})]}}), MERGE)
case("beta-workload-table", "GET", B + "/workloads", None, {"code": 200, "columns": ["Name", "Age"]}, None, TABLE)

# ---------------------------------------------------------------- v1beta1 PodGroup
ref = {"workloadName": "wb-ok", "templateName": "workers"}
pgb_spec = {"workloadRef": ref, "schedulingPolicy": {"gang": {"minCount": 4}}, "schedulingConstraints": RACK}
pgb_out = dict(pgb_spec, disruptionMode={"single": {}}, priority=0, preemptionPolicy="PreemptLowerPriority")
def pgb(spec, **m):
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": meta("pgb-ok", finalizers=FIN, **m), "spec": spec, "status": {}}
case("beta-podgroup-create", "POST", B + "/podgroups", pg("v1beta1", "pgb-ok", pgb_spec), obj(201, pgb(pgb_out)))
case("beta-podgroup-read-as-v1alpha2", "GET", A2 + "/podgroups/pgb-ok", None,
     obj(200, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta("pgb-ok", finalizers=FIN),
               "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "wb-ok", "podGroupTemplateName": "workers"}},
                        "schedulingPolicy": {"gang": {"minCount": 4}}, "schedulingConstraints": RACK,
                        "disruptionMode": "Pod", "priority": 0},
               "status": {}}))
pgb6 = dict(pgb_out, schedulingPolicy={"gang": {"minCount": 6}})
case("beta-podgroup-change-mincount", "PATCH", B + "/podgroups/pgb-ok", {"spec": {"schedulingPolicy": {"gang": {"minCount": 6}}}},
     obj(200, pgb(pgb6)), MERGE)
case("beta-podgroup-mincount-zero", "PATCH", B + "/podgroups/pgb-ok", {"spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}},
     invalid(("spec.schedulingPolicy.gang.minCount", "FieldValueRequired")), MERGE)
case("beta-podgroup-gang-to-basic", "PATCH", B + "/podgroups/pgb-ok", {"spec": {"schedulingPolicy": {"gang": None, "basic": {}}}},
     invalid(("spec.schedulingPolicy.basic", "FieldValueInvalid"), ("spec.schedulingPolicy.gang", "FieldValueInvalid")), MERGE)
case("beta-podgroup-change-workload-ref", "PATCH", B + "/podgroups/pgb-ok", {"spec": {"workloadRef": {"workloadName": "other"}}},
     invalid(("spec.workloadRef", "FieldValueInvalid")), MERGE)
case("beta-podgroup-change-topology", "PATCH", B + "/podgroups/pgb-ok", {"spec": {"schedulingConstraints": ZONE}},
     invalid(("spec.schedulingConstraints", "FieldValueInvalid")), MERGE)
case("beta-podgroup-change-priority", "PATCH", B + "/podgroups/pgb-ok", {"spec": {"priority": 7}},
     invalid(("spec.priority", "FieldValueInvalid")), MERGE)
case("beta-podgroup-ref-missing-template", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-badref", {"workloadRef": {"workloadName": "wb-ok"}, "schedulingPolicy": {"basic": {}}}),
     invalid(("spec.workloadRef.templateName", "FieldValueRequired")))
case("beta-podgroup-parent-without-ref", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-orphan", {"parentCompositePodGroupName": "pair", "schedulingPolicy": {"basic": {}}}),
     invalid(("spec.workloadRef", "FieldValueRequired")))
case("beta-podgroup-no-policy", "POST", B + "/podgroups", pg("v1beta1", "pgb-none", {"schedulingPolicy": {}}),
     invalid(("spec.schedulingPolicy", "FieldValueInvalid")))
case("beta-podgroup-two-disruption-modes", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-disr", {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}, "all": {}}}),
     invalid(("spec.disruptionMode", "FieldValueInvalid")))
case("beta-podgroup-priority-set", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-prio", {"schedulingPolicy": {"basic": {}}, "priority": 1000}), forbidden())
case("beta-podgroup-priority-class-missing", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-pc", {"schedulingPolicy": {"basic": {}}, "priorityClassName": "no-such-class"}), forbidden())
case("beta-podgroup-preemption-policy-differs", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-never", {"schedulingPolicy": {"basic": {}}, "preemptionPolicy": "Never"}), forbidden())
case("beta-podgroup-two-resource-claim-sources", "POST", B + "/podgroups",
     pg("v1beta1", "pgb-claims", {"schedulingPolicy": {"basic": {}},
                                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}]}),
     invalid(("spec.resourceClaims[0]", "FieldValueInvalid")))
cond = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "m",
        "lastTransitionTime": "2026-11-29T00:00:00Z"}
cond_out = {k: v for k, v in cond.items() if k != "lastTransitionTime"}
case("beta-podgroup-status", "PATCH", B + "/podgroups/pgb-ok/status", {"status": {"conditions": [cond]}},
     obj(200, dict(pgb(pgb6), status={"conditions": [cond_out]})), MERGE)
case("beta-podgroup-status-read-as-v1alpha2", "GET", A2 + "/podgroups/pgb-ok", None,
     obj(200, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta("pgb-ok", finalizers=FIN),
               "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "wb-ok", "podGroupTemplateName": "workers"}},
                        "schedulingPolicy": {"gang": {"minCount": 6}}, "schedulingConstraints": RACK,
                        "disruptionMode": "Pod", "priority": 0},
               "status": {"conditions": [dict(cond_out, type="PodGroupScheduled")]}}))
case("beta-podgroup-status-duplicate-condition", "PATCH", B + "/podgroups/pgb-ok/status",
     {"status": {"conditions": [cond, dict(cond, status="False", reason="Unschedulable")]}},
     invalid(("status.conditions[1]", "FieldValueDuplicate")), MERGE)
case("beta-podgroup-status-bad-reason", "PATCH", B + "/podgroups/pgb-ok/status",
     {"status": {"conditions": [dict(cond, reason="not a reason", type="")]}},
     invalid(("status.conditions[0].reason", "FieldValueInvalid"), ("status.conditions[0].type", "FieldValueRequired")), MERGE)
case("beta-podgroup-status-claim-unknown", "PATCH", B + "/podgroups/pgb-ok/status",
     {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "c"}]}},
     invalid(("status.resourceClaimStatuses[0].name", "FieldValueInvalid")), MERGE)
case("beta-podgroup-table", "GET", B + "/podgroups", None,
     {"code": 200, "columns": ["Name", "Policy", "Workload", "Status", "Age"]}, None, TABLE)
case("beta-discovery", "GET", "/apis/scheduling.k8s.io/v1beta1", None,
     {"code": 200, "resources": [["podgroups", "PodGroup", "create,delete,deletecollection,get,list,patch,update,watch", True],
                                 ["podgroups/status", "PodGroup", "get,patch,update", True],
                                 ["workloads", "Workload", "create,delete,deletecollection,get,list,patch,update,watch", True]]})

# ---------------------------------------------------------------- v1alpha3: CompositePodGroup and the tree
cpg_spec = {"workloadRef": {"workloadName": "wc-pair", "templateName": "pair"},
            "schedulingPolicy": {"gang": {"minGroupCount": 1}}, "schedulingConstraints": RACK}
cpg_out = dict(cpg_spec, disruptionMode={"single": {}}, priority=0, preemptionPolicy="PreemptLowerPriority")
def cpg_obj(spec, status=None):
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": meta("pair-0"),
            "spec": spec, "status": status or {}}
case("alpha3-composite-create", "POST", A3 + "/compositepodgroups", cpg("pair-0", cpg_spec), obj(201, cpg_obj(cpg_out)))
case("alpha3-composite-get", "GET", A3 + "/compositepodgroups/pair-0", None, obj(200, cpg_obj(cpg_out)))
case("alpha3-composite-no-workload-ref", "POST", A3 + "/compositepodgroups",
     cpg("pair-x", {"schedulingPolicy": {"basic": {}}}), invalid(("spec.workloadRef", "FieldValueRequired")))
case("alpha3-composite-no-policy", "POST", A3 + "/compositepodgroups",
     cpg("pair-y", dict(cpg_spec, schedulingPolicy={})), invalid(("spec.schedulingPolicy", "FieldValueInvalid")))
case("alpha3-composite-change-min-group-count", "PATCH", A3 + "/compositepodgroups/pair-0",
     {"spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}}}, invalid(("spec.schedulingPolicy", "FieldValueInvalid")), MERGE)
ccond = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": "0/4 nodes",
         "lastTransitionTime": "2026-11-29T00:00:00Z"}
case("alpha3-composite-status", "PATCH", A3 + "/compositepodgroups/pair-0/status", {"status": {"conditions": [ccond]}},
     obj(200, cpg_obj(cpg_out, {"conditions": [{k: v for k, v in ccond.items() if k != "lastTransitionTime"}]})), MERGE)
child_spec = {"parentCompositePodGroupName": "pair-0", "workloadRef": {"workloadName": "wc-pair", "templateName": "left"},
              "schedulingPolicy": {"gang": {"minCount": 2}}}
child_out = dict(child_spec, disruptionMode={"single": {}}, priority=0, preemptionPolicy="PreemptLowerPriority")
case("alpha3-podgroup-child-create", "POST", A3 + "/podgroups", pg("v1alpha3", "pair-0-left", child_spec),
     obj(201, {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": meta("pair-0-left", finalizers=FIN),
               "spec": child_out, "status": {}}))
case("alpha3-podgroup-child-read-as-v1beta1", "GET", B + "/podgroups/pair-0-left", None,
     obj(200, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta("pair-0-left", finalizers=FIN),
               "spec": child_out, "status": {}}))
case("alpha3-podgroup-child-change-parent", "PATCH", A3 + "/podgroups/pair-0-left",
     {"spec": {"parentCompositePodGroupName": "pair-1"}}, invalid(("spec.parentCompositePodGroupName", "FieldValueInvalid")), MERGE)
case("alpha3-workload-read-as-v1alpha3", "GET", A3 + "/workloads/wc-pair", None,
     obj(200, {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "Workload", "metadata": meta("wc-pair"),
               "spec": {"podGroupTemplates": None,
                        "compositePodGroupTemplates": [dict(pair_out, schedulingPolicy={"gang": {"minGroupCount": 2}})]}}))
case("alpha3-composite-table", "GET", A3 + "/compositepodgroups", None,
     {"code": 200, "columns": ["Name", "Policy", "Workload", "Status", "Age"]}, None, TABLE)
case("alpha3-discovery", "GET", "/apis/scheduling.k8s.io/v1alpha3", None,
     {"code": 200, "resources": [["compositepodgroups", "CompositePodGroup", "create,delete,deletecollection,get,list,patch,update,watch", True],
                                 ["compositepodgroups/status", "CompositePodGroup", "get,patch,update", True],
                                 ["podgroups", "PodGroup", "create,delete,deletecollection,get,list,patch,update,watch", True],
                                 ["podgroups/status", "PodGroup", "get,patch,update", True],
                                 ["workloads", "Workload", "create,delete,deletecollection,get,list,patch,update,watch", True]]})

# ---------------------------------------------------------------- v1alpha2 writes, read through v1beta1
a2_spec = {"podGroupTemplateRef": {"workload": {"workloadName": "wb-ok", "podGroupTemplateName": "workers"}},
           "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup"}
case("alpha2-podgroup-create", "POST", A2 + "/podgroups", pg("v1alpha2", "pg-a2", a2_spec),
     obj(201, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta("pg-a2", finalizers=FIN),
               "spec": dict(a2_spec, priority=0), "status": {}}))
a2_as_beta = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta("pg-a2", finalizers=FIN),
              "spec": {"workloadRef": {"workloadName": "wb-ok", "templateName": "workers"},
                       "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}},
                       "priority": 0, "preemptionPolicy": "PreemptLowerPriority"},
              "status": {}}
case("alpha2-podgroup-read-as-v1beta1", "GET", B + "/podgroups/pg-a2", None, obj(200, a2_as_beta))
case("alpha2-podgroup-label-through-v1alpha2", "PATCH", A2 + "/podgroups/pg-a2", {"metadata": {"labels": {"team": "a"}}},
     obj(200, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
               "metadata": meta("pg-a2", finalizers=FIN, labels={"team": "a"}),
               "spec": dict(a2_spec, priority=0), "status": {}}), MERGE)
case("alpha2-podgroup-keeps-what-v1alpha2-cannot-say", "GET", B + "/podgroups/pg-a2", None,
     obj(200, dict(a2_as_beta, metadata=meta("pg-a2", finalizers=FIN, labels={"team": "a"}))))
case("alpha2-podgroup-mincount-is-immutable-in-v1alpha2", "PATCH", A2 + "/podgroups/pg-a2",
     {"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}},
     invalid(("spec.schedulingPolicy", "FieldValueInvalid")), MERGE)
case("alpha2-podgroup-mincount-may-change-in-v1beta1", "PATCH", B + "/podgroups/pg-a2",
     {"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}},
     obj(200, dict(a2_as_beta, metadata=meta("pg-a2", finalizers=FIN, labels={"team": "a"}),
                   spec=dict(a2_as_beta["spec"], schedulingPolicy={"gang": {"minCount": 3}}))), MERGE)

# ---------------------------------------------------------------- deletes
case("beta-podgroup-delete", "DELETE", B + "/podgroups/pgb-ok", None,
     obj(200, dict(pgb(pgb6, deletionGracePeriodSeconds=0), status={"conditions": [cond_out]})))
case("alpha3-composite-delete", "DELETE", A3 + "/compositepodgroups/pair-0", None,
     {"code": 200, "reason": None, "causes": [], "message": None})
case("beta-workload-delete", "DELETE", B + "/workloads/wb-two", None,
     {"code": 200, "reason": None, "causes": [], "message": None})

# v1beta1 Workload templates are kept in the order given; the corpus tool strips
# volatile metadata only, as for the recorded corpus.
print(json.dumps({"server": "expected answers written from the upstream types' validation tags (k8s.io/api scheduling v1alpha3, v1beta1)", "cases": cases}, indent=1, sort_keys=True))
