// lsvd and lranks for the working scalar double (see factorizations.hpp).
#include "factorizations_impl.hpp"

template class Eigen::BDCSVD<Eigen::MatrixXd>;  // declared in eigen_instances.hpp

namespace tprod::cli {
using W = double;
template svd_factors<W> lsvd(const tensor3<W>&, const transform_choice&, svd_request);
template rank_info lranks(const tensor3<W>&, const transform_choice&, double, double);
}  // namespace tprod::cli
