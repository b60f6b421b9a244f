// The order in which the per-wafer gradient sums are added: a tree whose leaves are wafers and
// whose inner nodes add their children left to right, like a SwarmX node that sums its children
// in fixed child order.
//
// Contract: a node's value is ((c_0 + c_1) + c_2) + ... over its children in order, each +
// rounded in fp32 (a node with one child passes it through). The tree is plain data, so the
// orchestrator can build the one its SwarmX nodes form and hand it to the reference trainer.
// validate() accepts only trees whose leaves are exactly the wafers 0..N-1, each once.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace wsemu::train {

struct ReductionTree {
  static constexpr size_t no_wafer = static_cast<size_t>(-1);

  size_t wafer = no_wafer;                // a leaf: this wafer's sum
  std::vector<ReductionTree> children;    // an inner node: these, added in order

  bool is_leaf() const { return wafer != no_wafer; }

  static ReductionTree leaf(size_t wafer);
  // One node adding wafers 0..N-1 in order: (((w0 + w1) + w2) + ...).
  static ReductionTree sequential(size_t wafers);
  // Nodes of at most `fan_in` children, built bottom-up: consecutive groups of fan_in wafers
  // under one node each, then consecutive groups of those nodes, until one root remains (a group
  // of one is passed up unchanged). fan_in 4 is a tree of SwarmX 1:4 nodes.
  static ReductionTree fan_in_tree(size_t wafers, size_t fan_in);

  // Throws std::invalid_argument unless the leaves are exactly 0..wafers-1, each once.
  void validate(size_t wafers) const;
  // For messages and logs: "(0+1+(2+3))".
  std::string to_string() const;

  // out[k] = this tree's sum of per_wafer[w][k], for k < count.
  void reduce(std::span<const float* const> per_wafer, size_t count, float* out) const;
  // The same for one scalar per wafer (the loss sums).
  float reduce_scalar(std::span<const float> per_wafer) const;
};

}  // namespace wsemu::train
