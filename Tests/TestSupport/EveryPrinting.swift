/// Every way a value reaches a log written out: `"\(value)"` and `print`, `debugPrint`, and
/// `dump` (which reads the value's mirror, not its description).
public func everyPrinting(of value: Any) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    return [String(describing: value), String(reflecting: value), dumped]
}
