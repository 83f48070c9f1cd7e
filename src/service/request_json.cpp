#include "service/request_json.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>

namespace tula::service {
namespace {

using nlohmann::json;

// Levels of containers quote_json shows before it writes [...] or {...}.
constexpr size_t kQuotedLevels = 2;

// Thrown from the parser's callback: the body nests too deep.
struct TooDeep {};

// Thrown from the parser's callback: an object names `key` twice.
struct DuplicateKey {
  std::string key;
};

// The key path to where the parser is ("profile.compute"), empty keys (array
// levels) left out.
std::string joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (!k.empty()) out += (out.empty() ? "" : ".") + k;
  }
  return out;
}

// `text` cut to `max_chars` characters (then "..."), not inside a UTF-8 sequence.
std::string cut_text(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

std::string text_of_scalar(const json& v, size_t max_chars) {
  if (v.is_string()) {
    // The dump escapes control bytes as JSON does (\u0000).
    return json(cut_text(v.get_ref<const std::string&>(), max_chars)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return v.dump();  // numbers, booleans, null: never nested
}

struct Frame {
  const json* container;
  json::const_iterator next;
  bool first = true;
};

// Writes a scalar, or opens a container (pushes it) while within kQuotedLevels.
void put(const json& v, std::vector<Frame>& stack, std::string& out, size_t max_chars) {
  if (!v.is_structured()) {
    out += text_of_scalar(v, max_chars);
  } else if (v.empty()) {
    out += v.is_array() ? "[]" : "{}";
  } else if (stack.size() >= kQuotedLevels) {
    out += v.is_array() ? "[...]" : "{...}";
  } else {
    out += v.is_array() ? '[' : '{';
    stack.push_back({&v, v.cbegin()});
  }
}

}  // namespace

json parse_request_json(const std::string& text) {
  std::vector<std::string> keys;  // the object keys on the way to where the parser is
  // The keys seen so far in each object open on the way, by the depth of its keys.
  std::vector<std::set<std::string>> seen;
  const json::parser_callback_t watch = [&keys, &seen](int depth, json::parse_event_t event, json& parsed) {
    // `depth` counts the containers around the one that starts; a key's, the containers around it.
    const bool starts = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (starts && depth >= kMaxJsonDepth) throw TooDeep{};
    const auto level = static_cast<size_t>(depth);
    if (event == json::parse_event_t::object_start) {
      seen.resize(level + 2);
      seen[level + 1].clear();
    }
    if (event == json::parse_event_t::key) {
      keys.resize(level);
      keys.back() = parsed.get<std::string>();
      if (!seen[level].insert(keys.back()).second) throw DuplicateKey{keys.back()};
    }
    return true;
  };
  const auto where = [&keys] { return keys.empty() ? std::string() : " (in field '" + quote_text(joined(keys)) + "')"; };
  try {
    return json::parse(text, watch);
  } catch (const DuplicateKey& e) {
    throw BadRequest("field '" + quote_text(e.key) + "' is given twice in one object" +
                     (keys.size() > 1 ? where() : std::string()) + "; give each field once");
  } catch (const TooDeep&) {
    throw BadRequest(fmt::format("the JSON nests arrays and objects deeper than {} levels{}; the API reads at most {}",
                                 kMaxJsonDepth, where(), kMaxJsonDepth));
  } catch (const json::out_of_range& e) {
    if (e.id != 406) throw BadRequest("malformed JSON: " + quote_text(e.what(), 300));
    const std::string field = keys.empty() ? "" : keys.front();
    throw NumberOutOfRange((field.empty() ? std::string("the body") : "field '" + quote_text(field) + "'") +
                               " holds a number too large for a double (beyond 1.8e308)" +
                               (keys.size() > 1 ? where() : ""),
                           field);
  } catch (const json::exception& e) {
    throw BadRequest("malformed JSON: " + quote_text(e.what(), 300));
  }
}

std::string quote_text(const std::string& text, size_t max_chars) { return escape_controls(cut_text(text, max_chars)); }

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

std::string quote_json(const json& v, size_t max_chars) {
  std::string out;
  std::vector<Frame> stack;
  put(v, stack, out, max_chars);
  while (!stack.empty() && out.size() <= max_chars) {
    Frame& f = stack.back();
    if (f.next == f.container->cend()) {
      out += f.container->is_array() ? ']' : '}';
      stack.pop_back();
      continue;
    }
    if (!f.first) out += ", ";
    f.first = false;
    const auto item = f.next++;
    if (f.container->is_object()) out += text_of_scalar(json(item.key()), max_chars) + ": ";
    put(*item, stack, out, max_chars);  // may push: `f` is not used after this
  }
  return quote_text(out, max_chars);
}

}  // namespace tula::service
