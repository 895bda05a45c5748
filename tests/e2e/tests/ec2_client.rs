//! `mco-ec2` against a real EC2 API: moto's server on loopback
//! ([`mco_e2e::moto`]), seeded with Red Hat-owned, marketplace and other
//! AMIs. What moto cannot show is covered by the crate's own fault tests
//! (`host/ec2/tests/ec2_faults.rs`): moto pages no DescribeImages answer,
//! and refuses keys it does not know with `AuthFailure` (once told to
//! check them) but never gives `UnauthorizedOperation`.

use std::time::Duration;

use mco_e2e::moto::{Ami, Moto};
use mco_ec2::{Client, Credentials, ErrorKind, MARKETPLACE_OWNER, RED_HAT_OWNER, Timeouts};

const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";
const OKE: &str = "963b36c3-de6f-48ed-b802-2b38b2a2cdeb";

fn ami(id: &str, owner: &str, name: &str, description: &str) -> Ami {
    Ami {
        id: id.to_owned(),
        owner_id: owner.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        creation_date: "2026-02-10T12:00:00.000Z".to_owned(),
    }
}

fn client(moto: &Moto) -> Client {
    let timeouts = Timeouts {
        connect: Duration::from_secs(5),
        read: Duration::from_secs(30),
        call: Duration::from_secs(60),
    };
    Client::new(
        "us-east-1",
        Some(&moto.endpoint),
        Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
        ),
        timeouts,
    )
    .expect("client")
}

#[tokio::test]
async fn describes_images_and_lists_a_products_marketplace_images() -> anyhow::Result<()> {
    let mut amis = vec![
        ami(
            "ami-0a00000000000000a",
            RED_HAT_OWNER,
            "rhcos-9.6.20260210-0-x86_64",
            "OpenShift 4.21",
        ),
        ami(
            "ami-0c00000000000000c",
            "123456789012",
            &format!("copy-of-{OCP}"),
            "a customer's copy",
        ),
        ami(
            "ami-0d00000000000000d",
            MARKETPLACE_OWNER,
            &format!("RHEL-9.4-OKE-{OKE}"),
            "RHEL CoreOS 9.6 9.6.20260210-0 x86_64",
        ),
    ];
    // A dozen marketplace images of the product, named and described as
    // the marketplace names them (moto answers them in one page).
    let marketplace: Vec<String> = (0..12).map(|i| format!("ami-0b{i:015x}")).collect();
    for (i, id) in marketplace.iter().enumerate() {
        amis.push(ami(
            id,
            MARKETPLACE_OWNER,
            &format!("RHEL-9.4-RHCOS-9.{i}_HVM_GA-20260210-x86_64-0-{OCP}"),
            &format!("RHEL CoreOS 9.{i} 9.{i}.20260210-0 x86_64"),
        ));
    }
    let moto = Moto::start(&amis)?;
    let ec2 = client(&moto);

    let image = ec2
        .describe_image("ami-0a00000000000000a")
        .await?
        .expect("moto holds the Red Hat AMI");
    assert_eq!(image.owner_id, RED_HAT_OWNER);
    assert_eq!(image.name.as_deref(), Some("rhcos-9.6.20260210-0-x86_64"));
    assert_eq!(
        image.creation_date.as_deref(),
        Some("2026-02-10T12:00:00.000Z")
    );

    // An AMI EC2 does not know is None (moto answers InvalidAMIID.NotFound,
    // as EC2 does); one that is no AMI ID is EC2's refusal.
    assert_eq!(ec2.describe_image("ami-0fffffffffffffff0").await?, None);
    let err = ec2.describe_image("not-an-ami").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert_eq!(err.code(), Some("InvalidAMIID.Malformed"), "{err}");

    // Only the marketplace account's images of that product: not another
    // product's, not a copy of the product that another account owns.
    let mut listed: Vec<String> = ec2
        .marketplace_images(OCP)
        .await?
        .into_iter()
        .map(|image| {
            assert_eq!(image.owner_id, MARKETPLACE_OWNER);
            image.image_id
        })
        .collect();
    listed.sort();
    assert_eq!(listed, marketplace, "moto's log:\n{}", moto.log_tail());
    assert!(
        ec2.marketplace_images("00000000-0000-0000-0000-000000000000")
            .await?
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn a_stopped_ec2_is_unreachable() -> anyhow::Result<()> {
    let mut moto = Moto::start(&[])?;
    let ec2 = client(&moto);
    assert_eq!(ec2.describe_image("ami-0fffffffffffffff0").await?, None);
    moto.stop()?;
    let err = ec2
        .describe_image("ami-0fffffffffffffff0")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unreachable, "{err}");
    assert!(err.to_string().starts_with("EC2 DescribeImages: "), "{err}");
    Ok(())
}

#[tokio::test]
async fn credentials_ec2_refuses_are_denied_not_unreachable() -> anyhow::Result<()> {
    let moto = Moto::start(&[])?;
    let ec2 = client(&moto);
    assert_eq!(ec2.describe_image("ami-0fffffffffffffff0").await?, None);
    moto.refuse_credentials()?;
    let err = ec2
        .describe_image("ami-0fffffffffffffff0")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Denied, "{err}");
    assert_eq!(err.code(), Some("AuthFailure"), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("EC2 DescribeImages: HTTP 401: AuthFailure: "),
        "{text}"
    );
    assert!(!text.contains("wJalrXUtnFEMI"), "{text}");
    moto.accept_any_credentials()?;
    assert_eq!(ec2.describe_image("ami-0fffffffffffffff0").await?, None);
    Ok(())
}
