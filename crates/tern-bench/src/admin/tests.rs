use super::profile::split;
use super::*;

#[test]
fn split_reads_callgrind_annotate() {
    let text = "\
--------------------------------------------------------------------------------
20,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                  file:function
--------------------------------------------------------------------------------
19,000,000 (95.00%)  ???:tokio::runtime::task::raw::poll [/peer]
 4,000,000 (20.00%)  crates/tern-admin/src/registry.rs:<tern_admin::registry::Registered<M> as tern_admin::registry::AdminModel>::list::{{closure}} [/peer]
 3,000,000 (15.00%)  crates/tern-admin/src/registry.rs:tern_admin::registry::Registered<M>::record [/peer]
 2,000,000 (10.00%)  src/main.rs:tern_admin::registry::Registered<M>::record
 2,000,000 (10.00%)  crates/tern-admin/src/pages/list.rs:tern_admin::pages::list::list_page [/peer]
 2,400,000 (12.00%)  crates/tern-admin/src/views.rs:tern_admin::views::_::<impl askama::Template for tern_admin::views::ListPage>::render_into_with_values
 1,000,000 (5.00%)  crates/tern-admin/src/access.rs:<tern_admin::access::AdminUser as tern_core::extract::FromRequestParts<S>>::from_request_parts::{{closure}} [/peer]
";
    let p = split(text, 2).expect("parsed");
    assert_eq!(p.total, 10_000_000.0);
    let part = |n: &str| p.parts.iter().find(|(k, _, _)| k == n).expect(n).1;
    assert_eq!(part("session+permission"), 500_000.0);
    assert_eq!(part("database"), 500_000.0);
    assert_eq!(part("rows as text"), 1_500_000.0);
    assert_eq!(part("view"), 1_000_000.0);
    assert_eq!(part("template"), 1_200_000.0);
    assert_eq!(part("other"), 5_300_000.0);
    assert!(split("nothing", 1).is_err());
    // A part's function missing: an error, not a zero.
    let renamed = text.replace("list_page", "list_view");
    assert!(split(&renamed, 2).is_err());
}

#[test]
fn row_tables_cycle_through_every_id() {
    let cookies = Cookies {
        superuser: "s=1".to_owned(),
        staff: "s=2".to_owned(),
    };
    let row = WORKLOADS.iter().find(|w| w.name == "row").expect("row");
    let t = table(row, &cookies);
    assert_eq!(t.len(), 200);
    assert_eq!(t[6].0.path, "/admin/bench_rows/7");
    assert_eq!(t[6].1, r#"value="row 007""#);
    assert!(t[6]
        .0
        .headers
        .contains(&("Cookie".to_owned(), "s=1".to_owned())));
    let ping = table(&WORKLOADS[0], &cookies);
    assert_eq!(ping.len(), 1);
    assert!(ping[0].0.headers.iter().all(|(k, _)| k != "Cookie"));
    let staff = WORKLOADS
        .iter()
        .find(|w| w.name == "list-staff")
        .expect("list-staff");
    assert_eq!(table(staff, &cookies)[0].0.headers[1].1, "s=2");
}
