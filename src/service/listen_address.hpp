// Where `tula serve` listens and by which names people reach it: `--listen
// HOST:PORT` (`[V6]:PORT` for IPv6), whether HOST is loopback (decided by
// resolving it, never by how its name is spelled), and the `--public-name`
// addresses a proxy puts in front of it. No LibTorch here.
#pragma once
#include <string>

namespace tula::service {

struct ListenAddress {
  std::string host;  // as given, without the brackets of an IPv6 literal
  int port = 0;
};

// "HOST:PORT" or "[V6]:PORT"; throws std::invalid_argument naming what is wrong.
ListenAddress parse_listen(const std::string& text);

// True when HOST resolves, and every address it resolves to is a loopback
// one (127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6).
bool resolves_to_loopback_only(const std::string& host);

// True for the addresses that listen on every interface ("0.0.0.0", "::").
bool is_wildcard(const std::string& host);

// A host as it appears in a URL or a Host header: IPv6 literals in brackets, lower case.
std::string url_host(const std::string& host);

// An address people type into a browser to reach the server through a proxy:
// "[http(s)://]NAME[:PORT]" (http and its default port when left out).
struct PublicName {
  std::string origin;  // "https://tula.example.com": scheme://host[:port], the port only when not the default
  std::string host;    // "tula.example.com", as a Host header names it (url_host form)
};

// Throws std::invalid_argument naming what is wrong.
PublicName parse_public_name(const std::string& text);

}  // namespace tula::service
