#pragma once
// Whether this build runs under AddressSanitizer (scripts/sanitize), which changes what a little code
// may do: it reserves terabytes of address space (no address-space limits), and it cannot follow
// stack switches it was not told about.
namespace semsim {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace semsim
