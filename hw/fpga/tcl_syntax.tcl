# Syntax check of Tcl/XDC files without running them: every file must split into complete
# commands (balanced braces, brackets and quotes), and the bodies of the structural
# commands (proc, if, foreach, while, for, catch) are checked the same way recursively.
proc check_script {script where} {
    set errors {}
    set cmd ""
    set line 0
    set start 1
    foreach l [split $script "\n"] {
        incr line
        if {$cmd eq ""} { set start $line }
        append cmd $l "\n"
        if {![info complete $cmd]} { continue }
        if {[string trim $cmd] ne "" && ![string match "#*" [string trim $cmd]]} {
            if {[catch {set words [lrange [split_command $cmd] 0 end]} msg]} {
                lappend errors "$where:$start: $msg"
            } else {
                lappend errors {*}[check_bodies $words "$where:$start"]
            }
        }
        set cmd ""
    }
    if {$cmd ne ""} { lappend errors "$where:$start: incomplete command (unbalanced braces or quotes)" }
    return $errors
}
# A command's words, as a list (a script line is a valid list only in simple cases, so
# fall back to no words when it is not: the completeness check above still applies).
proc split_command {cmd} {
    set c [string trim $cmd]
    if {[catch {llength $c}]} { return {} }
    return $c
}
proc check_bodies {words where} {
    set errors {}
    set name [lindex $words 0]
    set bodies {}
    switch -- $name {
        proc    { set bodies [list [lindex $words 3]] }
        foreach { set bodies [list [lindex $words end]] }
        while   { set bodies [list [lindex $words 2]] }
        for     { set bodies [list [lindex $words 4]] }
        catch   { set bodies [list [lindex $words 1]] }
        if {
            for {set i 2} {$i < [llength $words]} {incr i} {
                set w [lindex $words $i]
                if {$w in {then else elseif}} { continue }
                if {[lindex $words [expr {$i - 1}]] eq "elseif"} { continue }
                lappend bodies $w
            }
        }
    }
    foreach b $bodies {
        if {[string first "\n" $b] >= 0 || [string first ";" $b] >= 0} {
            lappend errors {*}[check_script $b "$where (body)"]
        }
    }
    return $errors
}
set all {}
foreach f $argv {
    set fh [open $f]; set text [read $fh]; close $fh
    set errs [check_script $text $f]
    if {[llength $errs]} { lappend all {*}$errs } else { puts "tcl syntax ok: $f" }
}
if {[llength $all]} {
    puts stderr [join $all "\n"]
    exit 1
}
