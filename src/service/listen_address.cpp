#include "service/listen_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>

namespace tula::service {

namespace {

int parse_port(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 5 || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    throw std::invalid_argument(what + " must end in a numeric port (got '" + text + "')");
  }
  const int port = std::stoi(text);
  if (port > 65535) throw std::invalid_argument(what + ": the port must be 0-65535 (got " + text + ")");
  return port;
}

bool is_loopback(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(v6) || (IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
  }
  return false;
}

// A host name or an IP literal: letters, digits, '-', '.', and ':' for IPv6.
bool plausible_host(const std::string& host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == ':' || c == '_';
  });
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

ListenAddress parse_listen(const std::string& text) {
  const std::string what = "--listen " + text;
  ListenAddress out;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw std::invalid_argument(what + ": an IPv6 address is written [ADDRESS]:PORT, e.g. [::1]:8470");
    }
    out.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    in6_addr ignored{};
    if (::inet_pton(AF_INET6, out.host.c_str(), &ignored) != 1) {
      throw std::invalid_argument(what + ": '" + out.host + "' in brackets is not an IPv6 address");
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument(what + " must be HOST:PORT (or [IPv6]:PORT)");
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (out.host.find(':') != std::string::npos) {
      throw std::invalid_argument(what + ": write an IPv6 address in brackets, e.g. [" + out.host + "]:" + port);
    }
  }
  if (!plausible_host(out.host)) throw std::invalid_argument(what + ": '" + out.host + "' is not a host name or address");
  out.port = parse_port(port, what);
  return out;
}

bool resolves_to_loopback_only(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return false;
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (!is_loopback(a->ai_addr)) return false;
  }
  return true;
}

bool is_wildcard(const std::string& host) { return host == "0.0.0.0" || host == "::" || host.empty(); }

std::string url_host(const std::string& host) {
  const std::string h = lower(host);
  return h.find(':') != std::string::npos && h.front() != '[' ? "[" + h + "]" : h;
}

PublicName parse_public_name(const std::string& text) {
  const std::string what = "--public-name " + text;
  std::string scheme = "http", rest = text;
  if (const auto sep = text.find("://"); sep != std::string::npos) {
    scheme = lower(text.substr(0, sep));
    rest = text.substr(sep + 3);
    if (scheme != "http" && scheme != "https") throw std::invalid_argument(what + ": the scheme must be http or https");
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  std::string host = rest, port;
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) throw std::invalid_argument(what + ": an unclosed '[' in the host");
    host = rest.substr(0, close + 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') throw std::invalid_argument(what + " must be [SCHEME://]NAME[:PORT]");
      port = rest.substr(close + 2);
    }
  } else if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  const std::string bare = host.size() > 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  if (!plausible_host(bare) || rest.find('/') != std::string::npos) {
    throw std::invalid_argument(what + " must be [SCHEME://]NAME[:PORT], as typed into a browser (e.g. https://tula.example.com)");
  }
  const std::string default_port = scheme == "https" ? "443" : "80";
  if (!port.empty()) port = std::to_string(parse_port(port, what));
  PublicName out;
  out.host = url_host(bare);
  out.origin = scheme + "://" + out.host + (port.empty() || port == default_port ? "" : ":" + port);
  return out;
}

}  // namespace tula::service
