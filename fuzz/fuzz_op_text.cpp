// libFuzzer harness: an op as a profile row or `npusim predict` gives it (type, shapes, dtypes,
// formats, attributes as text), through make_op and predict on a real chip. Profile rows are
// outside input: any shape string a profile holds reaches here. Input: lines "type", input
// shapes, input dtypes, input formats, output shapes, output dtypes, then "key=value" attributes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "model/hw_spec.h"
#include "model/op_desc.h"
#include "model/predict.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const npusim::HwSpec hw =
      npusim::load_hw_spec(npusim::fuzz::source_dir() / "hw_specs" / "ascend910b3.toml");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size() && lines.size() < 24) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  lines.resize(std::max<std::size_t>(lines.size(), 6));
  npusim::OpText op;
  op.name = "fuzz";
  op.type = lines[0];
  op.input_shapes = lines[1];
  op.input_dtypes = lines[2];
  op.input_formats = lines[3];
  op.output_shapes = lines[4];
  op.output_dtypes = lines[5];
  for (std::size_t i = 6; i < lines.size(); ++i) {
    const std::size_t eq = lines[i].find('=');
    if (eq == std::string::npos) continue;
    op.attrs.emplace_back(lines[i].substr(0, eq), lines[i].substr(eq + 1));
  }
  try {
    const npusim::OpDesc desc = npusim::make_op(op, npusim::SourcePos{"fuzz", 1, 0});
    (void)npusim::predict(desc, hw);
    (void)npusim::predict(desc, hw, npusim::CoreBudget{3, 5});
  } catch (const npusim::InputError&) {
  }
  return 0;
}
