# Helpers for the IP scripts.

# Set CONFIG.<name> on an IP one property at a time, so that a name or value that this
# Vivado version does not accept is reported by name; fail after trying all of them.
proc rnic_ip_props {ip props} {
    set bad {}
    foreach {name value} $props {
        if {[catch {set_property CONFIG.$name $value $ip} msg]} {
            lappend bad "CONFIG.$name = $value: $msg"
        }
    }
    if {[llength $bad] > 0} {
        error "IP [get_property NAME $ip]: [llength $bad] parameter(s) rejected:\n  [join $bad "\n  "]"
    }
}
