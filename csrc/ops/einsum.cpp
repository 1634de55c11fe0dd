#include "ops/einsum.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/shape.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts {

namespace {

// A label: a letter (A-Z 0..25, a-z 26..51, so sorting labels is sorting letters as ASCII) or the
// k-th broadcast dim of '...' counted from the right (kEllipsis + k).
using Label = int;
using Labels = std::vector<Label>;
constexpr Label kEllipsis = 100;

std::string label_str(Label l) {
  if (l >= kEllipsis) return "...";
  return std::string(1, static_cast<char>(l < 26 ? 'A' + l : 'a' + (l - 26)));
}

Label letter(char c, const std::string& eq) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  throw ValueError(str("einsum: invalid subscript '", std::string(1, c), "' in '", eq,
                       "' (letters only); hint: write subscripts like 'ij,jk->ik'"));
}

// The labels of one term; has_ellipsis tells whether it had '...', n_named its letters.
Labels parse_letters(const std::string& term, const std::string& eq, bool* has_ellipsis,
                     size_t* split) {
  const size_t e = term.find("...");
  const std::string rest = e == std::string::npos ? term : term.substr(0, e) + term.substr(e + 3);
  TS_CHECK(rest.find('.') == std::string::npos, ValueError, "einsum: invalid subscripts '", eq,
           "': at most one '...' per operand and no other '.'");
  *has_ellipsis = e != std::string::npos;
  *split = *has_ellipsis ? e : rest.size();
  Labels out;
  for (char c : rest) out.push_back(letter(c, eq));
  return out;
}

Labels parse_term(const std::string& term, int64_t ndim, const std::string& eq) {
  bool ell = false;
  size_t split = 0;
  const Labels named = parse_letters(term, eq, &ell, &split);
  const int64_t n = static_cast<int64_t>(named.size());
  TS_CHECK(ell ? n <= ndim : n == ndim, ValueError, "einsum: subscripts '", term,
           "' do not match an operand of ", ndim,
           " dims; hint: give one letter per dim or use "
           "'...'");
  Labels out(named.begin(), named.begin() + static_cast<int64_t>(split));
  const int64_t k = ell ? ndim - n : 0;
  for (int64_t i = 0; i < k; ++i) out.push_back(kEllipsis + (k - 1 - i));
  out.insert(out.end(), named.begin() + static_cast<int64_t>(split), named.end());
  return out;
}

struct Operand {
  Tensor x;
  Labels labels;
};

// Repeated labels within one operand -> their diagonal (a view), moved to the end.
Operand take_diagonals(Operand op) {
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < op.labels.size() && !again; ++i) {
      for (size_t j = i + 1; j < op.labels.size(); ++j) {
        if (op.labels[i] != op.labels[j]) continue;
        const Label l = op.labels[i];
        TS_CHECK(op.x.dim(i) == op.x.dim(j), ValueError, "einsum: repeated subscript '",
                 label_str(l), "' has sizes ", op.x.dim(i), " and ", op.x.dim(j),
                 " in one operand (shape ", shape_str(op.x.shape()), ")");
        op.x = diagonal(op.x, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
        Labels rest;
        for (size_t k = 0; k < op.labels.size(); ++k)
          if (k != i && k != j) rest.push_back(op.labels[k]);
        rest.push_back(l);
        op.labels = rest;
        again = true;
        break;
      }
    }
  }
  return op;
}

bool has(const Labels& ls, Label l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }
int64_t pos(const Labels& ls, Label l) { return std::find(ls.begin(), ls.end(), l) - ls.begin(); }

// Sums over the labels not in keep.
Operand sum_out(Operand op, const std::set<Label>& keep) {
  Shape drop;
  Labels kept;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (keep.count(op.labels[i]))
      kept.push_back(op.labels[i]);
    else
      drop.push_back(static_cast<int64_t>(i));
  }
  if (drop.empty()) return op;
  return {sum(op.x, drop, false, std::nullopt), kept};
}

int64_t prod_of(const Shape& s, size_t a, size_t b) {
  int64_t p = 1;
  for (size_t i = a; i < b; ++i) p *= s[i];
  return p;
}

// One pairwise contraction as a batched matmul: (batch, a-free, summed) @ (batch, summed, b-free).
Operand contract(Operand a, Operand b, const std::set<Label>& keep) {
  Labels batch, summed, fa, fb;
  for (Label l : a.labels) {
    if (has(b.labels, l))
      (keep.count(l) ? batch : summed).push_back(l);
    else
      fa.push_back(l);
  }
  for (Label l : b.labels)
    if (!has(a.labels, l)) fb.push_back(l);
  // a size-1 summed dim on one side broadcasts against the other: sum that side first
  for (Label l : summed) {
    const int64_t na = a.x.dim(pos(a.labels, l)), nb = b.x.dim(pos(b.labels, l));
    if (na == nb) continue;
    TS_CHECK(na == 1 || nb == 1, ValueError, "einsum: subscript '", label_str(l), "' has sizes ",
             na, " and ", nb, " in two operands");
    if (na == 1)
      b.x = sum(b.x, Shape{pos(b.labels, l)}, true, std::nullopt);
    else
      a.x = sum(a.x, Shape{pos(a.labels, l)}, true, std::nullopt);
  }
  // batch dims of size 1 on one side broadcast in matmul
  Shape pa, pb;
  for (const Labels* g : {&batch, &fa, &summed}) {
    for (Label l : *g) pa.push_back(pos(a.labels, l));
  }
  for (const Labels* g : {&batch, &summed, &fb}) {
    for (Label l : *g) pb.push_back(pos(b.labels, l));
  }
  const Tensor ta = permute_dims(a.x, pa), tb = permute_dims(b.x, pb);
  const Shape& sa = ta.shape();
  const Shape& sb = tb.shape();
  const size_t nbatch = batch.size();
  const int64_t ma = prod_of(sa, nbatch, nbatch + fa.size());
  const int64_t k = prod_of(sa, nbatch + fa.size(), sa.size());
  const int64_t nb = prod_of(sb, nbatch + summed.size(), sb.size());
  Shape ra(sa.begin(), sa.begin() + static_cast<int64_t>(nbatch));
  Shape rb(sb.begin(), sb.begin() + static_cast<int64_t>(nbatch));
  ra.push_back(ma);
  ra.push_back(k);
  rb.push_back(k);
  rb.push_back(nb);
  const Tensor r = matmul(reshape(ta, ra), reshape(tb, rb));
  Shape shape(r.shape().begin(), r.shape().begin() + static_cast<int64_t>(nbatch));
  for (size_t i = 0; i < fa.size(); ++i) shape.push_back(sa[nbatch + i]);
  for (size_t i = 0; i < fb.size(); ++i) shape.push_back(sb[nbatch + summed.size() + i]);
  Labels labels = batch;
  labels.insert(labels.end(), fa.begin(), fa.end());
  labels.insert(labels.end(), fb.begin(), fb.end());
  return {reshape(r, shape), labels};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  TS_CHECK(!operands.empty(), ValueError,
           "einsum: at least one operand is required; hint: einsum('ij->ji', x)");
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  TS_CHECK(terms.size() == operands.size(), ValueError, "einsum: ", terms.size(),
           " operand subscripts in '", equation, "' but ", operands.size(), " operands");
  DType dt = operands[0].dtype();
  for (const Tensor& t : operands) dt = promote_types(dt, t.dtype());
  std::vector<Operand> ops;
  int64_t nell = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    Labels ls = parse_term(terms[i], operands[i].ndim(), equation);
    nell = std::max<int64_t>(
        nell, std::count_if(ls.begin(), ls.end(), [](Label l) { return l >= kEllipsis; }));
    ops.push_back({astype_op(operands[i], dt, false), std::move(ls)});
  }
  Labels out;
  if (arrow != std::string::npos) {
    bool ell = false;
    size_t split = 0;
    const Labels named = parse_letters(eq.substr(arrow + 2), equation, &ell, &split);
    out.assign(named.begin(), named.begin() + static_cast<int64_t>(split));
    if (ell)
      for (int64_t i = 0; i < nell; ++i) out.push_back(kEllipsis + (nell - 1 - i));
    out.insert(out.end(), named.begin() + static_cast<int64_t>(split), named.end());
    std::set<Label> seen;
    for (Label l : out) {
      TS_CHECK(seen.insert(l).second, ValueError, "einsum: output subscript '", label_str(l),
               "' repeated in '", equation, "'");
      bool found = l >= kEllipsis;
      for (const Operand& op : ops) found = found || has(op.labels, l);
      TS_CHECK(found, ValueError, "einsum: output subscript '", label_str(l),
               "' does not appear in the inputs of '", equation, "'");
    }
  } else {  // implicit: the broadcast dims, then the letters appearing once, sorted
    std::map<Label, int> counts;
    for (const Operand& op : ops)
      for (Label l : op.labels)
        if (l < kEllipsis) ++counts[l];
    for (int64_t i = 0; i < nell; ++i) out.push_back(kEllipsis + (nell - 1 - i));
    for (const auto& [l, n] : counts)
      if (n == 1) out.push_back(l);
  }
  std::map<Label, int64_t> sizes;
  for (Operand& op : ops) {
    op = take_diagonals(std::move(op));
    for (size_t i = 0; i < op.labels.size(); ++i) {
      const Label l = op.labels[i];
      const int64_t n = op.x.dim(static_cast<int64_t>(i));
      const auto it = sizes.find(l);
      if (it == sizes.end()) {
        sizes[l] = n;
      } else if (it->second != n && n != 1) {
        TS_CHECK(it->second == 1, ValueError, "einsum: subscript '", label_str(l), "' has sizes ",
                 it->second, " and ", n, " in '", equation, "'");
        it->second = n;
      }
    }
  }
  const std::set<Label> outset(out.begin(), out.end());
  auto needed = [&](size_t skip1, size_t skip2) {
    std::set<Label> keep = outset;
    for (size_t i = 0; i < ops.size(); ++i)
      if (i != skip1 && i != skip2) keep.insert(ops[i].labels.begin(), ops[i].labels.end());
    return keep;
  };
  const size_t none = static_cast<size_t>(-1);
  for (size_t i = 0; i < ops.size(); ++i) ops[i] = sum_out(ops[i], needed(i, none));
  while (ops.size() > 1) {
    size_t bi = 0, bj = 1;
    double best = -1;
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = i + 1; j < ops.size(); ++j) {
        const std::set<Label> keep = needed(i, j);
        std::set<Label> res;
        for (const Labels* ls : {&ops[i].labels, &ops[j].labels})
          for (Label l : *ls)
            if (keep.count(l)) res.insert(l);
        double cost = 1;
        for (Label l : res) cost *= static_cast<double>(sizes[l]);
        if (best < 0 || cost < best) {
          best = cost;
          bi = i;
          bj = j;
        }
      }
    }
    Operand merged = contract(ops[bi], ops[bj], needed(bi, bj));
    ops.erase(ops.begin() + static_cast<int64_t>(bj));
    ops.erase(ops.begin() + static_cast<int64_t>(bi));
    ops.push_back(std::move(merged));
    ops.back() = sum_out(ops.back(), needed(ops.size() - 1, none));
  }
  const Operand last = sum_out(ops[0], outset);
  Shape perm, target;
  for (Label l : out) {
    perm.push_back(pos(last.labels, l));
    target.push_back(sizes[l]);
  }
  Tensor r = permute_dims(last.x, perm);
  if (r.shape() != target) r = broadcast_to(r, target);  // size-1 dims no operand widened
  return r;
}

}  // namespace ts
