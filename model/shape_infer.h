#pragma once
// Shape inference: the output shapes and dtypes of an op from its input shapes, dtypes and
// attributes, for every op type of the op table (model/op_table.cpp) that has a rule, so that a
// graph op needs only its inputs (Graph::build fills the rest and checks declared outputs).
//
// Shapes are templates in the batch symbol B: a dimension is k or k*B, and every rule works on
// those symbols (B,8 concatenated with B,8 on axis 0 is B*2,8). A result that is not of that
// form (B+1, B*B) is an InputError naming the op, never a silent guess.
//
// Data-dependent outputs (Where with one input, NonZero, Unique, MaskedSelect, BooleanMask) are
// inferred as an upper bound (every element selected): InferredOutputs::exact is false and the
// note says so. docs/graphs.md lists the attributes each rule reads.

#include <optional>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/op_desc.h"

namespace npusim {

/// What a rule inferred for one op.
struct InferredOutputs {
  std::vector<std::string> shapes;  ///< one template per output ("" = a scalar)
  std::vector<std::string> dtypes;  ///< canonical spellings ("FLOAT16")
  bool exact = true;                ///< false: data-dependent, `shapes` is an upper bound
  std::string note;                 ///< how it was inferred when that needs saying
};

/// The outputs of `op` (its type and attributes; other fields are ignored) given its input shape
/// templates and dtypes (canonical or profile spellings), one per input. nullopt when the type
/// has no rule or a value the rule needs is not given (a Reshape without `shape`, a Tile without
/// `multiples`). Throws InputError at `pos` when the inputs contradict the op (shapes that do
/// not broadcast, a MatMul whose K differ, an axis out of range) or the result is not k or k*B.
[[nodiscard]] std::optional<InferredOutputs> infer_output_templates(
    const OpText& op, const std::vector<std::string>& input_shapes,
    const std::vector<std::string>& input_dtypes, const SourcePos& pos);

}  // namespace npusim
