#include "runtime/train/reduction_tree.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace wsemu::train {

namespace {

void collect_leaves(const ReductionTree& node, std::vector<size_t>& leaves) {
  if (node.is_leaf()) {
    if (!node.children.empty()) throw std::invalid_argument("reduction tree: a leaf has children");
    leaves.push_back(node.wafer);
    return;
  }
  if (node.children.empty()) throw std::invalid_argument("reduction tree: an inner node has no children");
  for (const ReductionTree& child : node.children) collect_leaves(child, leaves);
}

}  // namespace

ReductionTree ReductionTree::leaf(size_t wafer) {
  ReductionTree node;
  node.wafer = wafer;
  return node;
}

ReductionTree ReductionTree::sequential(size_t wafers) { return fan_in_tree(wafers, std::max<size_t>(wafers, 2)); }

ReductionTree ReductionTree::fan_in_tree(size_t wafers, size_t fan_in) {
  if (wafers == 0) throw std::invalid_argument("reduction tree: at least one wafer is needed");
  if (fan_in < 2) throw std::invalid_argument("reduction tree: fan-in must be at least 2");
  std::vector<ReductionTree> level;
  for (size_t w = 0; w < wafers; ++w) level.push_back(leaf(w));
  if (wafers == 1) {
    ReductionTree root;
    root.children = std::move(level);
    return root;
  }
  while (level.size() > 1) {
    std::vector<ReductionTree> next;
    for (size_t begin = 0; begin < level.size(); begin += fan_in) {
      const size_t end = std::min(begin + fan_in, level.size());
      if (end - begin == 1) {
        next.push_back(std::move(level[begin]));
        continue;
      }
      ReductionTree node;
      for (size_t k = begin; k < end; ++k) node.children.push_back(std::move(level[k]));
      next.push_back(std::move(node));
    }
    level = std::move(next);
  }
  return std::move(level.front());
}

void ReductionTree::validate(size_t wafers) const {
  std::vector<size_t> leaves;
  collect_leaves(*this, leaves);
  std::vector<size_t> sorted = leaves;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] != k || k >= wafers)
      throw std::invalid_argument(fmt::format(
          "reduction tree {} does not have exactly the wafers 0..{} as leaves", to_string(), wafers - 1));
  if (sorted.size() != wafers)
    throw std::invalid_argument(fmt::format("reduction tree {} has {} leaves for {} wafers", to_string(),
                                            sorted.size(), wafers));
}

std::string ReductionTree::to_string() const {
  if (is_leaf()) return std::to_string(wafer);
  std::string text = "(";
  for (size_t k = 0; k < children.size(); ++k) {
    if (k > 0) text.push_back('+');
    text.append(children[k].to_string());
  }
  text.push_back(')');
  return text;
}

void ReductionTree::reduce(std::span<const float* const> per_wafer, size_t count, float* out) const {
  if (is_leaf()) {
    if (wafer >= per_wafer.size()) throw std::out_of_range("reduction tree: leaf wafer out of range");
    std::copy(per_wafer[wafer], per_wafer[wafer] + count, out);
    return;
  }
  children.front().reduce(per_wafer, count, out);
  std::vector<float> child_sum(count);
  for (size_t c = 1; c < children.size(); ++c) {
    children[c].reduce(per_wafer, count, child_sum.data());
    for (size_t k = 0; k < count; ++k) out[k] = out[k] + child_sum[k];
  }
}

float ReductionTree::reduce_scalar(std::span<const float> per_wafer) const {
  std::vector<const float*> pointers;
  for (const float& value : per_wafer) pointers.push_back(&value);
  float out = 0.0f;
  reduce(pointers, 1, &out);
  return out;
}

}  // namespace wsemu::train
