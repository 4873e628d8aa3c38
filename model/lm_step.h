#pragma once
// The damped step of the Levenberg-Marquardt fits (model/calibration.cpp, model/transfer_fit.cpp):
// both solved the same trial loop, each with its own copy.
#include <Eigen/Dense>

#include <algorithm>

namespace npusim {

/// Tries up to `max_tries` damped Gauss-Newton steps from `u` (normal matrix `jtwj`, gradient
/// `grad`, bounds lo..hi), raising the damping `mu` x4 after each step that does not lower
/// `cost`. On the first that does, takes it (u, r, cost updated, mu / 3 down to 1e-7) and returns
/// the relative decrease; returns a negative value when no step improved.
/// `residuals(u)` gives the residual vector at u, `cost_of(r, u)` its cost.
template <class Residuals, class CostOf>
double lm_damped_step(const Eigen::MatrixXd& jtwj, const Eigen::VectorXd& grad,
                      const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, int max_tries,
                      double& mu, Eigen::VectorXd& u, Eigen::VectorXd& r, double& cost,
                      const Residuals& residuals, const CostOf& cost_of) {
  for (int tries = 0; tries < max_tries; ++tries) {
    Eigen::MatrixXd a_mat = jtwj;
    a_mat.diagonal() += mu * jtwj.diagonal();
    const Eigen::VectorXd delta = a_mat.ldlt().solve(-grad);
    const Eigen::VectorXd un = (u + delta).cwiseMax(lo).cwiseMin(hi);
    const Eigen::VectorXd rn = residuals(un);
    const double cn = cost_of(rn, un);
    if (cn < cost) {
      const double rel = (cost - cn) / std::max(cost, 1e-12);
      u = un;
      r = rn;
      cost = cn;
      mu = std::max(mu / 3, 1e-7);
      return rel;
    }
    mu *= 4;
  }
  return -1;
}

}  // namespace npusim
