#include "replay/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace copse::replay {

using nlohmann::json;

namespace {

double OneRackShare(const ConfigResult& r) {
  return r.gangs_placed > 0 ? static_cast<double>(r.gangs_one_rack) / r.gangs_placed : 0;
}
double OneBlockShare(const ConfigResult& r) {
  return r.gangs_placed > 0 ? static_cast<double>(r.gangs_one_block) / r.gangs_placed : 0;
}

// The configuration with the best value, or nullopt on a tie for best.
std::optional<std::string> Best(const std::vector<ConfigResult>& results,
                                const std::function<double(const ConfigResult&)>& value,
                                bool higher_is_better) {
  if (results.size() < 2) return std::nullopt;
  size_t best = 0;
  bool tie = false;
  for (size_t i = 1; i < results.size(); ++i) {
    const double a = value(results[i]), b = value(results[best]);
    if (std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b))) {
      tie = true;
    } else if (higher_is_better ? a > b : a < b) {
      best = i;
      tie = false;
    }
  }
  if (tie) return std::nullopt;
  return results[best].name;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string Duration(double ms) {
  if (ms < 1000) return Num(ms, 0) + " ms";
  if (ms < 120'000) return Num(ms / 1000, 1) + " s";
  if (ms < 7'200'000) return Num(ms / 60'000, 1) + " min";
  return Num(ms / 3'600'000, 1) + " h";
}

// A step function resampled to at most `buckets` time-weighted means.
std::vector<SeriesPoint> Resample(const std::vector<SeriesPoint>& s, int64_t end, int buckets) {
  std::vector<SeriesPoint> out;
  if (s.empty() || end <= 0) return s;
  const double width = static_cast<double>(end) / buckets;
  size_t i = 0;
  for (int b = 0; b < buckets; ++b) {
    const double lo = b * width, hi = (b + 1) * width;
    double area = 0;
    while (i + 1 < s.size() && static_cast<double>(s[i + 1].t_ms) <= lo) ++i;
    for (size_t j = i; j < s.size() && static_cast<double>(s[j].t_ms) < hi; ++j) {
      const double from = std::max(lo, static_cast<double>(s[j].t_ms));
      const double to = std::min(hi, j + 1 < s.size() ? static_cast<double>(s[j + 1].t_ms) : hi);
      if (to > from) area += s[j].value * (to - from);
    }
    out.push_back({static_cast<int64_t>(lo), area / width});
  }
  return out;
}

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                   "#9467bd", "#ff7f0e", "#8c564b"};

std::string Chart(const std::string& title, const std::string& unit,
                  const std::vector<ConfigResult>& results,
                  const std::function<const std::vector<SeriesPoint>&(const ConfigResult&)>& series,
                  double scale) {
  constexpr int kW = 720, kH = 240, kL = 60, kR = 10, kT = 24, kB = 30;
  int64_t end = 1;
  for (const ConfigResult& r : results) end = std::max(end, r.end_ms);
  std::vector<std::vector<SeriesPoint>> lines;
  double top = 0;
  for (const ConfigResult& r : results) {
    lines.push_back(Resample(series(r), end, 240));
    for (SeriesPoint& p : lines.back()) {
      p.value *= scale;
      top = std::max(top, p.value);
    }
  }
  if (top <= 0) top = 1;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
      << "\" viewBox=\"0 0 " << kW << " " << kH << "\" font-family=\"sans-serif\" font-size=\"11\">"
      << "<text x=\"" << kL << "\" y=\"14\" font-size=\"13\">" << Escape(title) << "</text>"
      << "<line x1=\"" << kL << "\" y1=\"" << kH - kB << "\" x2=\"" << kW - kR << "\" y2=\""
      << kH - kB << "\" stroke=\"#888\"/>"
      << "<line x1=\"" << kL << "\" y1=\"" << kT << "\" x2=\"" << kL << "\" y2=\"" << kH - kB
      << "\" stroke=\"#888\"/>"
      << "<text x=\"" << kL - 4 << "\" y=\"" << kT + 4 << "\" text-anchor=\"end\">" << Num(top, 1)
      << Escape(unit) << "</text>"
      << "<text x=\"" << kL - 4 << "\" y=\"" << kH - kB << "\" text-anchor=\"end\">0</text>"
      << "<text x=\"" << kW - kR << "\" y=\"" << kH - 8 << "\" text-anchor=\"end\">"
      << Escape(Duration(static_cast<double>(end))) << "</text>"
      << "<text x=\"" << kL << "\" y=\"" << kH - 8 << "\">0</text>";
  for (size_t c = 0; c < lines.size(); ++c) {
    svg << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << kColors[c % 6]
        << "\" points=\"";
    for (const SeriesPoint& p : lines[c]) {
      const double x = kL + (kW - kL - kR) * static_cast<double>(p.t_ms) / static_cast<double>(end);
      const double y = (kH - kB) - (kH - kB - kT) * p.value / top;
      svg << Num(x, 1) << "," << Num(y, 1) << " ";
    }
    svg << "\"/>";
    svg << "<text x=\"" << kW - kR - 160 << "\" y=\"" << kT + 14 * (c + 1) << "\" fill=\""
        << kColors[c % 6] << "\">" << Escape(results[c].name) << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

json WaitJson(const WaitFigures& w) {
  return {{"pods", w.pods},
          {"placed", w.placed},
          {"p50_ms", w.p50_ms},
          {"p99_ms", w.p99_ms},
          {"mean_ms", w.mean_ms}};
}

json SeriesJson(const std::vector<SeriesPoint>& s, int64_t end) {
  json out = json::array();
  for (const SeriesPoint& p : Resample(s, end, 500)) out.push_back({p.t_ms, p.value});
  return out;
}

}  // namespace

Comparison Compare(std::vector<ConfigResult> results, size_t max_differences) {
  Comparison c;
  c.results = std::move(results);
  const auto& rs = c.results;
  auto set = [&c](const char* figure, std::optional<std::string> name) {
    if (name) c.best[figure] = *name;
  };
  set("gangs_placed", Best(
                          rs, [](const ConfigResult& r) { return double(r.gangs_placed); }, true));
  set("pods_placed", Best(
                         rs, [](const ConfigResult& r) { return double(r.pods_placed); }, true));
  set("wait_p50_ms", Best(
                         rs, [](const ConfigResult& r) { return r.wait_all.p50_ms; }, false));
  set("wait_p99_ms", Best(
                         rs, [](const ConfigResult& r) { return r.wait_all.p99_ms; }, false));
  set("wait_mean_ms", Best(
                          rs, [](const ConfigResult& r) { return r.wait_all.mean_ms; }, false));
  set("mean_gpu_utilization",
      Best(
          rs, [](const ConfigResult& r) { return r.mean_gpu_utilization; }, true));
  set("mean_stranded_gpus",
      Best(
          rs, [](const ConfigResult& r) { return r.mean_stranded_gpus; }, false));
  set("gangs_one_rack_fraction", Best(rs, OneRackShare, true));
  set("victims", Best(
                     rs, [](const ConfigResult& r) { return double(r.victims); }, false));
  if (rs.size() >= 2) {
    // Every result lists every trace pod, sorted: walk them together.
    const size_t n = rs[0].decisions.size();
    for (size_t i = 0; i < n; ++i) {
      bool differ = false;
      for (size_t k = 1; k < rs.size(); ++k) {
        if (i >= rs[k].decisions.size()) continue;
        const Decision& a = rs[0].decisions[i];
        const Decision& b = rs[k].decisions[i];
        differ = differ || a.node != b.node || a.bound_ms != b.bound_ms;
      }
      if (!differ) continue;
      ++c.differing;
      if (c.differences.size() < max_differences) {
        DecisionDiff d;
        d.pod = rs[0].decisions[i].pod;
        for (const ConfigResult& r : rs) {
          d.per_config.push_back(i < r.decisions.size() ? r.decisions[i] : Decision{});
        }
        c.differences.push_back(std::move(d));
      }
    }
  }
  return c;
}

std::string ReportJson(const TraceHeader& header, const Comparison& c) {
  json configs = json::array();
  for (const ConfigResult& r : c.results) {
    json wait = json::object();
    for (const auto& [priority, w] : r.wait_by_priority) wait[priority] = WaitJson(w);
    configs.push_back({{"name", r.name},
                       {"pods", r.pods},
                       {"pods_placed", r.pods_placed},
                       {"gangs", r.gangs},
                       {"gangs_placed", r.gangs_placed},
                       {"gangs_one_rack", r.gangs_one_rack},
                       {"gangs_one_block", r.gangs_one_block},
                       {"gangs_partial", r.gangs_partial},
                       {"max_nodes_over_allocatable", r.max_nodes_over_allocatable},
                       {"gangs_one_rack_fraction", OneRackShare(r)},
                       {"gangs_one_block_fraction", OneBlockShare(r)},
                       {"wait", WaitJson(r.wait_all)},
                       {"wait_by_priority", wait},
                       {"total_gpus", r.total_gpus},
                       {"mean_gpu_utilization", r.mean_gpu_utilization},
                       {"mean_stranded_gpus", r.mean_stranded_gpus},
                       {"gpus_used", SeriesJson(r.gpus_used, r.end_ms)},
                       {"gpus_stranded", SeriesJson(r.gpus_stranded, r.end_ms)},
                       {"preemption_attempts", r.preemption_attempts},
                       {"victims", r.victims},
                       {"end_ms", r.end_ms},
                       {"steps", r.steps},
                       {"cycles", r.cycles},
                       {"wall_seconds", r.wall_seconds}});
  }
  json diffs = json::array();
  for (const DecisionDiff& d : c.differences) {
    json per = json::object();
    for (size_t k = 0; k < d.per_config.size(); ++k) {
      const Decision& dec = d.per_config[k];
      per[c.results[k].name] = {{"node", dec.node.empty() ? json() : json(dec.node)},
                                {"bound_ms", dec.bound_ms < 0 ? json() : json(dec.bound_ms)}};
    }
    diffs.push_back({{"pod", d.pod}, {"decisions", per}});
  }
  json best = json::object();
  for (const auto& [figure, name] : c.best) best[figure] = name;
  return json{
      {"trace",
       {{"source", header.source}, {"start", header.start}, {"duration_ms", header.duration_ms}}},
      {"configs", configs},
      {"best", best},
      {"differing_decisions", c.differing},
      {"differences", diffs}}
      .dump(2);
}

std::string ReportHtml(const TraceHeader& header, const Comparison& c) {
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>copse replay</title><style>"
       "body{font-family:sans-serif;margin:2em;max-width:960px}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;"
       "text-align:right}th:first-child,td:first-child{text-align:left}.best{font-weight:bold;"
       "background:#e8f5e9}</style></head><body>";
  h << "<h1>copse replay</h1><p>Trace: " << Escape(header.source) << ", start "
    << Escape(header.start) << ", " << Escape(Duration(static_cast<double>(header.duration_ms)))
    << ". Bold: the best configuration for that figure.</p>";
  auto best_is = [&c](const char* figure, const std::string& name) {
    auto it = c.best.find(figure);
    return it != c.best.end() && it->second == name;
  };
  h << "<table><tr><th>figure</th>";
  for (const ConfigResult& r : c.results) h << "<th>" << Escape(r.name) << "</th>";
  h << "</tr>";
  auto row = [&](const char* label, const char* figure,
                 const std::function<std::string(const ConfigResult&)>& text) {
    h << "<tr><td>" << label << "</td>";
    for (const ConfigResult& r : c.results) {
      h << "<td" << (figure != nullptr && best_is(figure, r.name) ? " class=\"best\"" : "") << ">"
        << Escape(text(r)) << "</td>";
    }
    h << "</tr>";
  };
  row("gangs placed", "gangs_placed", [](const ConfigResult& r) {
    return std::to_string(r.gangs_placed) + " / " + std::to_string(r.gangs);
  });
  row("pods placed", "pods_placed", [](const ConfigResult& r) {
    return std::to_string(r.pods_placed) + " / " + std::to_string(r.pods);
  });
  row("wait p50 (all)", "wait_p50_ms",
      [](const ConfigResult& r) { return Duration(r.wait_all.p50_ms); });
  row("wait p99 (all)", "wait_p99_ms",
      [](const ConfigResult& r) { return Duration(r.wait_all.p99_ms); });
  std::set<std::string> priorities;
  for (const ConfigResult& r : c.results) {
    for (const auto& [p, w] : r.wait_by_priority) priorities.insert(p);
  }
  for (const std::string& p : priorities) {
    const std::string name = p.empty() ? "(no class)" : p;
    auto figures = [&p](const ConfigResult& r) {
      auto it = r.wait_by_priority.find(p);
      if (it == r.wait_by_priority.end()) return std::string("-");
      return Duration(it->second.p50_ms) + " / " + Duration(it->second.p99_ms) + " (" +
             std::to_string(it->second.placed) + "/" + std::to_string(it->second.pods) + ")";
    };
    h << "<tr><td>wait p50 / p99 " << Escape(name) << "</td>";
    for (const ConfigResult& r : c.results) h << "<td>" << Escape(figures(r)) << "</td>";
    h << "</tr>";
  }
  row("mean GPU utilization", "mean_gpu_utilization",
      [](const ConfigResult& r) { return Num(100 * r.mean_gpu_utilization) + "%"; });
  row("mean stranded GPUs", "mean_stranded_gpus",
      [](const ConfigResult& r) { return Num(r.mean_stranded_gpus); });
  row("gangs in one rack", "gangs_one_rack_fraction",
      [](const ConfigResult& r) { return Num(100 * OneRackShare(r)) + "%"; });
  row("gangs in one block", nullptr,
      [](const ConfigResult& r) { return Num(100 * OneBlockShare(r)) + "%"; });
  row("preemption attempts", nullptr,
      [](const ConfigResult& r) { return std::to_string(r.preemption_attempts); });
  row("victims", "victims", [](const ConfigResult& r) { return std::to_string(r.victims); });
  row("replay wall time", nullptr,
      [](const ConfigResult& r) { return Num(r.wall_seconds) + " s"; });
  h << "</table>";
  int64_t total_gpus = 0;
  for (const ConfigResult& r : c.results) total_gpus = std::max(total_gpus, r.total_gpus);
  h << Chart(
      "GPU utilization over time", "%", c.results,
      [](const ConfigResult& r) -> const std::vector<SeriesPoint>& { return r.gpus_used; },
      total_gpus > 0 ? 100.0 / static_cast<double>(total_gpus) : 0);
  h << "<br>"
    << Chart(
           "Stranded GPUs over time (free GPUs on nodes no pending GPU pod fits)", "", c.results,
           [](const ConfigResult& r) -> const std::vector<SeriesPoint>& { return r.gpus_stranded; },
           1.0);
  h << "<h2>Decisions that differ</h2><p>" << c.differing << " pod(s)";
  if (static_cast<int64_t>(c.differences.size()) < c.differing) {
    h << "; the first " << c.differences.size() << " listed";
  }
  h << ".</p>";
  if (!c.differences.empty()) {
    h << "<table><tr><th>pod</th>";
    for (const ConfigResult& r : c.results) h << "<th>" << Escape(r.name) << "</th>";
    h << "</tr>";
    for (const DecisionDiff& d : c.differences) {
      h << "<tr><td>" << Escape(d.pod) << "</td>";
      for (const Decision& dec : d.per_config) {
        h << "<td>"
          << (dec.node.empty()
                  ? std::string("not placed")
                  : Escape(dec.node) + " at " + Duration(static_cast<double>(dec.bound_ms)))
          << "</td>";
      }
      h << "</tr>";
    }
    h << "</table>";
  }
  h << "</body></html>\n";
  return h.str();
}

}  // namespace copse::replay
