#!/usr/bin/env python3
"""Writes kube/protobuf/schema_data.cc: copse's schema table for the protobuf
wire form of the built-in Kubernetes types it transcodes.

The table lists, for every message reachable from the kinds in KINDS below,
each field's number, JSON name, type and the JSON facts the wire does not
carry (whether a zero value is written, whether the JSON inlines the field).
Field numbers and types are read from the generated.proto files of Debian's
`kubernetes` source package (upstream v1.20.2, the same source
scripts/real-apiserver.sh builds kube-apiserver from); JSON names and
omitempty from the Go types' struct tags in the same tree. Fields added to
the API after v1.20 come from kube/protobuf/schema_supplement.txt, a
hand-curated list, appended to the messages it names.

Usage:
  apt-get source kubernetes     # needs deb-src; scripts/real-apiserver.sh enables it
  scripts/gen_kube_proto_schema.py kubernetes-1.20.2 kube/protobuf/schema_supplement.txt \\
      > kube/protobuf/schema_data.cc
"""
import glob
import os
import re
import sys

# (apiVersion, kind, package directory under k8s.io/api). policy/v1 and batch/v1
# CronJob are newer than v1.20 but keep their v1beta1 wire shape; their newer
# fields are in the supplement.
KINDS = [
    ("v1", k, "core/v1") for k in [
        "Binding", "ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace", "Node",
        "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodTemplate",
        "ReplicationController", "ResourceQuota", "Secret", "Service", "ServiceAccount"]
] + [
    ("apps/v1", k, "apps/v1") for k in [
        "ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"]
] + [
    ("batch/v1", "CronJob", "batch/v1beta1"),
    ("batch/v1", "Job", "batch/v1"),
] + [
    ("rbac.authorization.k8s.io/v1", k, "rbac/v1") for k in [
        "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
] + [
    ("scheduling.k8s.io/v1", "PriorityClass", "scheduling/v1"),
    ("policy/v1", "Eviction", "policy/v1beta1"),
    ("policy/v1", "PodDisruptionBudget", "policy/v1beta1"),
    ("coordination.k8s.io/v1", "Lease", "coordination/v1"),
    ("networking.k8s.io/v1", "Ingress", "networking/v1"),
    ("networking.k8s.io/v1", "IngressClass", "networking/v1"),
    ("networking.k8s.io/v1", "NetworkPolicy", "networking/v1"),
    ("events.k8s.io/v1", "Event", "events/v1"),
    ("autoscaling/v1", "Scale", "autoscaling/v1"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "authorization/v1"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "authorization/v1"),
]
# meta.k8s.io/v1 kinds every group version serves.
META_KINDS = ["Status", "DeleteOptions", "WatchEvent"]

# Types whose wire and JSON forms the transcoder knows by name.
SPECIAL = {"meta.v1.Time", "meta.v1.MicroTime", "meta.v1.Duration", "meta.v1.FieldsV1",
           "resource.Quantity", "intstr.IntOrString", "runtime.RawExtension"}


def short_package(pkg):
    for prefix in ("k8s.io.api.", "k8s.io.apimachinery.pkg.apis.", "k8s.io.apimachinery.pkg.api.",
                   "k8s.io.apimachinery.pkg.util.", "k8s.io.apimachinery.pkg."):
        if pkg.startswith(prefix):
            return pkg[len(prefix):]
    raise SystemExit("unknown package " + pkg)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def read_proto(path, messages):
    text = strip_comments(open(path).read())
    pkg = short_package(re.search(r"^package ([\w.]+);", text, re.M).group(1))
    for m in re.finditer(r"^message (\w+) \{(.*?)^\}", text, re.M | re.S):
        fields = []
        for line in m.group(2).splitlines():
            line = line.strip()
            if not line:
                continue
            f = re.match(r"map<(\w+), ([\w.]+)> (\w+) = (\d+);$", line)
            if f:
                fields.append(dict(label="map", key=f.group(1), type=f.group(2), name=f.group(3),
                                   number=int(f.group(4))))
                continue
            f = re.match(r"(optional|repeated) ([\w.]+) (\w+) = (\d+);$", line)
            if not f:
                raise SystemExit("%s: cannot read field line %r" % (path, line))
            fields.append(dict(label=f.group(1), type=f.group(2), name=f.group(3),
                               number=int(f.group(4))))
        messages[pkg + "." + m.group(1)] = dict(pkg=pkg, fields=fields)


def read_go(directory):
    """struct name -> {field number: (json name, omitempty, inline, pointer)}"""
    structs = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.go"))):
        base = os.path.basename(path)
        if base.endswith("_test.go") or base.startswith("zz_") or base.startswith("generated"):
            continue
        text = strip_comments(open(path).read())
        for m in re.finditer(r"^type (\w+) struct \{(.*?)^\}", text, re.M | re.S):
            fields = {}
            for line in m.group(2).splitlines():
                t = re.search(r"`([^`]*)`", line)
                if not t:
                    continue
                tags = t.group(1)
                p = re.search(r'protobuf:"\w+,(\d+),[^"]*"', tags)
                j = re.search(r'json:"([^"]*)"', tags)
                if not p or not j:
                    continue
                decl = line[:t.start()].split()
                go_type = decl[-1]
                parts = j.group(1).split(",")
                # An embedded struct without a JSON name is inlined (older trees spell
                # it `json:",inline"`).
                inline = len(decl) == 1 and parts[0] == ""
                fields[int(p.group(1))] = (parts[0], "omitempty" in parts[1:], inline,
                                           go_type.startswith("*"))
            structs[m.group(1)] = fields
    return structs


def read_supplement(path):
    """message name -> [(number, rendered line, element type, replace)] from the supplement.

    `replace` marks a field whose v1.20 type was later changed to a wire-compatible
    message with more fields; its line takes the place of v1.20's."""
    extra, name = {}, None
    for n, raw in enumerate(open(path), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if line.startswith("message "):
            name = line.split()[1]
            extra.setdefault(name, [])
            continue
        parts = line.split()
        if name is None or len(parts) < 3 or not parts[0].isdigit() or not set(parts[3:]) <= {
                "repeated", "emit", "inline", "replace"}:
            raise SystemExit("%s:%d: cannot read %r" % (path, n, raw.rstrip()))
        element = parts[2][4:-1].split(",")[1] if parts[2].startswith("map<") else parts[2]
        replace = "replace" in parts
        parts = [p for p in parts if p != "replace"]
        extra[name].append((int(parts[0]), "  " + " ".join(parts), element, replace))
    return extra


def main():
    source, supplement_path = sys.argv[1], sys.argv[2]
    api = os.path.join(source, "staging", "src", "k8s.io", "api")
    machinery = os.path.join(source, "staging", "src", "k8s.io", "apimachinery")
    supplement = read_supplement(supplement_path)
    messages = {}
    go = {}
    proto_dirs = sorted({d for _, _, d in KINDS})
    for d in proto_dirs:
        read_proto(os.path.join(api, d, "generated.proto"), messages)
        go[short_package("k8s.io.api." + d.replace("/", "."))] = read_go(os.path.join(api, d))
    for d in ["apis/meta/v1", "runtime", "api/resource", "util/intstr"]:
        read_proto(os.path.join(machinery, "pkg", d, "generated.proto"), messages)
        go[short_package("k8s.io.apimachinery.pkg." + d.replace("/", "."))] = read_go(
            os.path.join(machinery, "pkg", d))

    def resolve(type_name, pkg):
        # Newer trees write imported types with a leading dot, v1.20's without.
        if type_name.startswith(".") or type_name.startswith("k8s.io."):
            head, _, name = type_name.lstrip(".").rpartition(".")
            return short_package(head) + "." + name
        if type_name in ("string", "bytes", "bool", "int32", "int64", "double"):
            return type_name
        return pkg + "." + type_name

    roots = [short_package("k8s.io.api." + d.replace("/", ".")) + "." + k for _, k, d in KINDS]
    roots += ["meta.v1." + k for k in META_KINDS] + ["meta.v1.ListMeta", "runtime.Unknown"]
    order, seen = [], set()
    stack = list(reversed(roots))
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in SPECIAL:
            continue
        if name not in messages:
            # A field of a type from another k8s.io/api group version (e.g. core/v1 PodSpec
            # refers to scheduling types): load that package too.
            pkg = name.rsplit(".", 1)[0]
            d = os.path.join(api, pkg.replace(".", "/"))
            if pkg not in go and os.path.exists(os.path.join(d, "generated.proto")):
                read_proto(os.path.join(d, "generated.proto"), messages)
                go[pkg] = read_go(d)
        if name not in messages and name in supplement:
            messages[name] = dict(pkg=name.rsplit(".", 1)[0], fields=[])
        if name not in messages:
            raise SystemExit("message %s not found" % name)
        order.append(name)
        msg = messages[name]
        numbers = {f["number"] for f in msg["fields"]}
        for number, _, t, replace in supplement.get(name, []):
            if (number in numbers) != replace:
                raise SystemExit("supplement: %s field %d %s in the v1.20 tree" %
                                 (name, number, "is not" if replace else "is already"))
            if "." in t:
                stack.append(t)
        replaced = {number for number, _, _, r in supplement.get(name, []) if r}
        for f in reversed(msg["fields"]):
            t = resolve(f["type"], msg["pkg"])
            if "." in t and f["number"] not in replaced:
                stack.append(t)

    out = []
    for name in order:
        msg = messages[name]
        simple = name.rsplit(".", 1)[1]
        tags = go[msg["pkg"]].get(simple, {})
        out.append("message " + name)
        replaced = {number: line for number, line, _, r in supplement.get(name, []) if r}
        for f in msg["fields"]:
            if f["number"] in replaced:
                out.append(replaced[f["number"]])
                continue
            t = resolve(f["type"], msg["pkg"])
            tag = tags.get(f["number"])
            if tag is None and name not in ("runtime.Unknown", "runtime.TypeMeta"):
                raise SystemExit("%s.%s: no Go struct tag" % (name, f["name"]))
            json_name, omitempty, inline, pointer = tag or (f["name"], False, False, False)
            if json_name == "-":
                continue
            flags = []
            if f["label"] == "repeated":
                flags.append("repeated")
            if inline:
                flags.append("inline")
            elif pointer or not omitempty:
                flags.append("emit")
            type_text = "map<%s,%s>" % (f["key"], t) if f["label"] == "map" else t
            line = "%d %s %s" % (f["number"], json_name or f["name"], type_text)
            out.append("  " + " ".join([line] + flags))
        out.extend(line for _, line, _, r in supplement.get(name, []) if not r)
    for api_version, kind, d in KINDS:
        out.append("kind %s %s %s" % (api_version, kind,
                                      short_package("k8s.io.api." + d.replace("/", ".")) + "." + kind))
    for k in META_KINDS:
        out.append("kind * %s meta.v1.%s" % (k, k))

    print("// Generated by scripts/gen_kube_proto_schema.py from the generated.proto files and")
    print("// the Go struct tags of k8s.io/api and k8s.io/apimachinery in Debian's kubernetes")
    print("// source package (upstream v1.20.2), plus kube/protobuf/schema_supplement.txt for")
    print("// fields added after v1.20. Do not edit.")
    print("// Format (read by kube/protobuf/schema.cc):")
    print("//   message NAME             a message; its fields follow, one a line:")
    print("//     NUMBER JSON_NAME TYPE [repeated] [emit] [inline]")
    print("//       emit: a zero value present on the wire is written to JSON (Go pointer")
    print("//             or no omitempty); inline: the message's fields sit in the parent's JSON")
    print("//   kind API_VERSION KIND MESSAGE   (* for meta kinds any group version serves)")
    print()
    print('#include "kube/protobuf/schema.h"')
    print()
    print("namespace copse::kube::protobuf {")
    print()
    # GCC and Clang take long literals; split per 4 KiB anyway to stay portable.
    print("const char* const kSchemaText[] = {")
    chunk = []
    size = 0
    for line in out:
        chunk.append(line)
        size += len(line) + 1
        if size > 4000:
            print('    R"schema(' + "\n".join(chunk) + '\n)schema",')
            chunk, size = [], 0
    if chunk:
        print('    R"schema(' + "\n".join(chunk) + '\n)schema",')
    print("    nullptr,")
    print("};")
    print()
    print("}  // namespace copse::kube::protobuf")


if __name__ == "__main__":
    main()
