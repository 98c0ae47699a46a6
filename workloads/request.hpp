#pragma once
// A request as the serving system receives it.

namespace semsim {

struct Request {
  int id = 0;
  double arrival = 0;  // seconds since the start of the run
  int input_tokens = 0;
  int output_tokens = 0;
  int topic = 0;  // the routing source's latent topic (synthetic routing); 0 otherwise
};

}  // namespace semsim
