// npusim: an Ascend NPU performance model and simulator. Only main() catches (CONVENTIONS.md):
// bad input -> exit 2 with a file:line message, simulation failure -> 3, nothing written.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "app/common.h"
#include "model/error.h"

int main(int argc, char** argv) {
  CLI::App app{"npusim: predict, simulate and tune Ascend NPU workloads before booking hardware"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "npusim 0.1.0");
  npusim::app::install_model_importer();
  npusim::app::register_predict(app);
  npusim::app::register_analyze(app);
  npusim::app::register_graph(app);
  npusim::app::register_hw(app);
  npusim::app::register_validate(app);
  npusim::app::register_simulate(app);
  npusim::app::register_accuracy(app);
  npusim::app::register_calibrate(app);
  npusim::app::register_crossval(app);
  npusim::app::register_sweep(app);
  npusim::app::register_whatif(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const npusim::InputError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const npusim::InternalError& e) {
    std::cerr << e.what() << '\n';
    return 70;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
